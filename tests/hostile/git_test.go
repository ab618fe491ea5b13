package hostile

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// gitCases leave something in the workspace the file tools refuse (a
// secret file, a hard link to a file outside) and ask git_commit to commit
// (issue 14 item 8). Every approval is approved; the repository's objects
// must never hold the secret or the outside text.
var gitCases = []struct {
	name  string
	setup func(t *testing.T, w *world) (secret string)
	args  map[string]any
}{
	{"dotenv-default-paths", func(t *testing.T, w *world) string {
		w.write(".env", "API_TOKEN=HOSTILE-DOTENV-SECRET-1\n")
		return "HOSTILE-DOTENV-SECRET-1"
	}, map[string]any{"message": "update"}},
	{"dotenv-named", func(t *testing.T, w *world) string {
		w.write(".env", "API_TOKEN=HOSTILE-DOTENV-SECRET-2\n")
		return "HOSTILE-DOTENV-SECRET-2"
	}, map[string]any{"message": "update", "paths": []any{".env", "README.md"}}},
	{"dotenv-nested", func(t *testing.T, w *world) string {
		w.write("config/.env.production", "API_TOKEN=HOSTILE-DOTENV-SECRET-3\n")
		return "HOSTILE-DOTENV-SECRET-3"
	}, map[string]any{"message": "update"}},
	{"private-key", func(t *testing.T, w *world) string {
		w.write("deploy/id_rsa", "-----BEGIN OPENSSH PRIVATE KEY-----\nHOSTILEPRIVATEKEYBODY4\n-----END OPENSSH PRIVATE KEY-----\n")
		return "HOSTILEPRIVATEKEYBODY4"
	}, map[string]any{"message": "update"}},
	{"hard-link-default-paths", func(t *testing.T, w *world) string {
		must(t, os.Link(filepath.Join(w.outside, "canary.txt"), filepath.Join(w.ws, "linked.txt")))
		return w.canary
	}, map[string]any{"message": "update"}},
	{"hard-link-named", func(t *testing.T, w *world) string {
		must(t, os.Link(filepath.Join(w.outside, "canary.txt"), filepath.Join(w.ws, "linked.txt")))
		return w.canary
	}, map[string]any{"message": "update", "paths": []any{"linked.txt"}}},
	{"symlink-out-named", func(t *testing.T, w *world) string {
		must(t, os.Symlink(filepath.Join(w.outside, "canary.txt"), filepath.Join(w.ws, "link.txt")))
		return w.canary
	}, map[string]any{"message": "update", "paths": []any{"link.txt"}}},
	{"dir-symlink-out", func(t *testing.T, w *world) string {
		must(t, os.Symlink(w.outside, filepath.Join(w.ws, "vendor")))
		return w.canary
	}, map[string]any{"message": "update", "paths": []any{"vendor/canary.txt"}}},
}

func playGit(t *testing.T, l *ledger) {
	var wg sync.WaitGroup
	for _, c := range gitCases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t.Run(c.name, func(t *testing.T) {
				w := newWorld(t)
				w.write("README.md", "# Widget\n\nChanged.\n")
				secret := c.setup(t, w)
				w.putScriptProfile("commit", script(call{Tool: "git_commit", Args: c.args}), "2m")
				res := w.run("commit", "approve", 2*time.Minute, nil)
				if res.hung || terminal(res.events) == "" {
					t.Fatalf("the run did not end (hung %v, exit %d): %s", res.hung, res.code, res.stderr)
				}
				objects := gitObjects(t, w.ws)
				l.check(t, "git/"+c.name, !strings.Contains(objects, secret),
					"the repository's objects hold %q after the approved commit", secret)
			})
		}()
	}
	wg.Wait()
}

// gitObjects is the content of every object of the repository.
func gitObjects(t *testing.T, dir string) string {
	cmd := exec.Command("git", "cat-file", "--batch-all-objects", "--batch")
	cmd.Dir = dir
	out, err := cmd.Output()
	must(t, err)
	return string(out)
}
