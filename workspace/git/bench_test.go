package git

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
)

var (
	bigRepoOnce sync.Once
	bigRepoDir  string
)

// bigRepo builds, once per test binary, a committed 20,000-file repository
// (200 directories of 100 files) with 1% of the files modified and 20
// untracked files, the case the performance note compares.
func bigRepo(b *testing.B) string {
	bigRepoOnce.Do(func() {
		dir, err := os.MkdirTemp("", "agenthub-bigrepo-")
		if err != nil {
			b.Fatal(err)
		}
		gitCmd(b, dir, "init", "-q", "-b", "main")
		for d := range 200 {
			sub := filepath.Join(dir, fmt.Sprintf("pkg%03d", d))
			if err := os.MkdirAll(sub, 0o755); err != nil {
				b.Fatal(err)
			}
			for f := range 100 {
				content := fmt.Sprintf("package pkg%03d\n\n// file %d\nfunc F%d() int { return %d }\n", d, f, f, d*f)
				if err := os.WriteFile(filepath.Join(sub, fmt.Sprintf("f%03d.go", f)), []byte(content), 0o644); err != nil {
					b.Fatal(err)
				}
			}
		}
		gitCmd(b, dir, "add", "-A")
		gitCmd(b, dir, "commit", "-q", "-m", "base")
		for i := range 200 {
			write(b, dir, fmt.Sprintf("pkg%03d/f%03d.go", i, i%100), "changed\n")
		}
		for i := range 20 {
			write(b, dir, fmt.Sprintf("new/u%02d.go", i), "untracked\n")
		}
		// Refresh git's index stat cache, as an interactive user's git
		// would have; both sides then start from the same index.
		gitCmd(b, dir, "status", "--porcelain")
		bigRepoDir = dir
	})
	return bigRepoDir
}

func TestMain(m *testing.M) {
	code := m.Run()
	if bigRepoDir != "" {
		os.RemoveAll(bigRepoDir)
	}
	os.Exit(code)
}

// BenchmarkStatus20k compares go-git (through Status, including the HEAD
// comparison of every candidate) with the git CLI run as a whole process.
func BenchmarkStatus20k(b *testing.B) {
	dir := bigRepo(b)
	b.Run("gogit", func(b *testing.B) {
		for b.Loop() {
			st, err := Status(dir)
			if err != nil {
				b.Fatal(err)
			}
			if len(st.Files) != 220 {
				b.Fatalf("%d files, want 220", len(st.Files))
			}
		}
	})
	b.Run("gitcli", func(b *testing.B) {
		for b.Loop() {
			cmd := exec.Command("git", "status", "--porcelain=v1", "-z", "--untracked-files=all")
			cmd.Dir = dir
			out, err := cmd.Output()
			if err != nil || len(out) == 0 {
				b.Fatalf("git status: %v", err)
			}
		}
	})
}
