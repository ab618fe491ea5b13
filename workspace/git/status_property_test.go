package git

import (
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// propertyNames mixes plain and odd names at several depths; some collide
// as file and directory on purpose ("a" and "a/x").
var propertyNames = []string{"a", "b.txt", "c.go", "a/x", "a/y z", "d/e/f.md", "d/e/g", "d/h", "sp ace/ü.txt",
	"sp ace/new\nline", `back\slash`, "日本/語", "x.log", "tmp/t", "lib/run.sh", "-dash", "link"}

// TestStatusEnginesAgreeOnRandomRepos is the property test: on repositories
// built by a seeded random sequence of edits, stages, unstages, removals,
// renames, mode changes, links and ignored files, go-git's engine and the
// CLI's give identical reports. AGENTHUB_STATUS_SEEDS raises the count; a
// failure names its seed.
func TestStatusEnginesAgreeOnRandomRepos(t *testing.T) {
	seeds := 16
	if n, err := strconv.Atoi(os.Getenv("AGENTHUB_STATUS_SEEDS")); err == nil && n > 0 {
		seeds = n
	}
	for seed := range seeds {
		t.Run(fmt.Sprintf("seed=%d", seed), func(t *testing.T) {
			rng := rand.New(rand.NewPCG(uint64(seed), 5))
			dir := newRepo(t)
			write(t, dir, ".gitignore", "*.log\ntmp/\n")
			for _, p := range propertyNames {
				if rng.IntN(3) > 0 {
					tryWrite(dir, p, "v0 "+p+"\n")
				}
			}
			gitCmd(t, dir, "add", "-A")
			gitCmd(t, dir, "commit", "-q", "-m", "base")
			var log []string
			for range 12 {
				log = append(log, randomOp(rng, dir))
			}
			rep := statusBoth(t, dir, DefaultMaxFiles)
			t.Logf("operations: %q; %d changed paths", log, len(rep.Files))
		})
	}
}

// randomOp applies one random change; a change that does not fit the
// current tree (renaming a missing file, say) simply does nothing.
func randomOp(rng *rand.Rand, dir string) string {
	p := propertyNames[rng.IntN(len(propertyNames))]
	q := propertyNames[rng.IntN(len(propertyNames))]
	switch rng.IntN(11) {
	case 0:
		tryWrite(dir, p, fmt.Sprintf("v%d %s\n", rng.IntN(3), p)) // v0 is the committed content
		return "write " + p
	case 1:
		os.RemoveAll(filepath.Join(dir, p))
		return "remove " + p
	case 2:
		os.Chmod(filepath.Join(dir, p), []os.FileMode{0o644, 0o755}[rng.IntN(2)])
		return "chmod " + p
	case 3:
		tryGit(dir, "add", "-A", "--", p)
		return "git add " + p
	case 4:
		tryGit(dir, "reset", "-q", "--", p)
		return "git reset " + p
	case 5:
		tryGit(dir, "rm", "-q", "--cached", "-r", "--", p)
		return "git rm --cached " + p
	case 6:
		tryGit(dir, "mv", "-k", "--", p, q)
		return "git mv " + p + " " + q
	case 7:
		os.Rename(filepath.Join(dir, p), filepath.Join(dir, q))
		return "mv " + p + " " + q
	case 8:
		tryGit(dir, "add", "-N", "--", p)
		return "git add -N " + p
	case 9:
		os.RemoveAll(filepath.Join(dir, p))
		os.Symlink(q, filepath.Join(dir, p))
		return "symlink " + p + " → " + q
	default:
		tryWrite(dir, p+".log", "ignored\n")
		tryWrite(dir, "tmp/"+p, "ignored\n")
		return "ignored files near " + p
	}
}

func tryWrite(dir, rel, content string) {
	p := filepath.Join(dir, rel)
	if os.MkdirAll(filepath.Dir(p), 0o755) == nil {
		os.WriteFile(p, []byte(content), 0o644)
	}
}

func tryGit(dir string, args ...string) {
	cmd := exec.Command("git", args...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "GIT_CONFIG_GLOBAL=/dev/null", "GIT_CONFIG_NOSYSTEM=1")
	_ = cmd.Run()
}
