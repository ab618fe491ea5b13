package hostile

import (
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// toctouCase proposes a gated call, then changes the workspace while the
// approval waits (as a hostile repository's background process, or the
// agent's own earlier command, would), then approves it. What runs must be
// what was shown: the change fails closed (issue 14 item 3).
type toctouCase struct {
	name  string
	setup func(t *testing.T, w *world)
	call  call
	swap  func(t *testing.T, w *world)
	// escaped reports what of the swapped-in version happened.
	escaped func(t *testing.T, w *world) (bool, string)
}

func pwned(name string) func(t *testing.T, w *world) (bool, string) {
	return func(t *testing.T, w *world) (bool, string) {
		_, err := os.Stat(filepath.Join(w.ws, name))
		return err == nil, "the edited file ran after the approval of the original (" + name + " exists)"
	}
}

func shellCall(command string) call {
	return call{Tool: "run_shell", Args: map[string]any{"command": command, "timeout_seconds": 30}}
}

func executable(t *testing.T, w *world, rel, text string) {
	w.write(rel, text)
	must(t, os.Chmod(filepath.Join(w.ws, rel), 0o755))
}

var toctouCases = []toctouCase{
	{"bash-script-edited",
		func(t *testing.T, w *world) { w.write("build.sh", "echo building\n") },
		shellCall("bash ./build.sh"),
		func(t *testing.T, w *world) { w.write("build.sh", "touch pwned-bash\n") },
		pwned("pwned-bash")},
	{"sh-script-edited",
		func(t *testing.T, w *world) { w.write("build.sh", "echo building\n") },
		shellCall("sh build.sh"),
		func(t *testing.T, w *world) { w.write("build.sh", "touch pwned-sh\n") },
		pwned("pwned-sh")},
	{"direct-script-edited",
		func(t *testing.T, w *world) { executable(t, w, "build.sh", "#!/bin/sh\necho building\n") },
		shellCall("./build.sh"),
		func(t *testing.T, w *world) { executable(t, w, "build.sh", "#!/bin/sh\ntouch pwned-direct\n") },
		pwned("pwned-direct")},
	{"makefile-edited",
		func(t *testing.T, w *world) { w.write("Makefile", "all:\n\techo building\n") },
		shellCall("make"),
		func(t *testing.T, w *world) { w.write("Makefile", "all:\n\ttouch pwned-make\n") },
		pwned("pwned-make")},
	{"makefile-include-edited",
		func(t *testing.T, w *world) {
			w.write("Makefile", "include rules.mk\n")
			w.write("rules.mk", "all:\n\techo building\n")
		},
		shellCall("make"),
		func(t *testing.T, w *world) { w.write("rules.mk", "all:\n\ttouch pwned-include\n") },
		pwned("pwned-include")},
	{"python-script-edited",
		func(t *testing.T, w *world) { w.write("tool.py", "print('tool')\n") },
		shellCall("python3 tool.py"),
		func(t *testing.T, w *world) { w.write("tool.py", "open('pwned-python', 'w')\n") },
		pwned("pwned-python")},
	{"sourced-script-edited",
		func(t *testing.T, w *world) { w.write("env.sh", "echo env\n") },
		shellCall(". ./env.sh"),
		func(t *testing.T, w *world) { w.write("env.sh", "touch pwned-source\n") },
		pwned("pwned-source")},
	{"script-library-edited",
		func(t *testing.T, w *world) {
			w.write("build.sh", ". ./lib.sh\necho building\n")
			w.write("lib.sh", "echo lib\n")
		},
		shellCall("bash ./build.sh"),
		func(t *testing.T, w *world) { w.write("lib.sh", "touch pwned-lib\n") },
		pwned("pwned-lib")},
	{"makefile-recipe-script-edited",
		func(t *testing.T, w *world) {
			w.write("Makefile", "all:\n\t@sh ./gen.sh\n")
			w.write("gen.sh", "echo gen\n")
		},
		shellCall("make"),
		func(t *testing.T, w *world) { w.write("gen.sh", "touch pwned-recipe\n") },
		pwned("pwned-recipe")},
	{"nested-library-edited",
		func(t *testing.T, w *world) {
			w.write("build.sh", ". ./lib.sh\n")
			w.write("lib.sh", "source ./deep.sh\n")
			w.write("deep.sh", "echo deep\n")
		},
		shellCall("bash ./build.sh"),
		func(t *testing.T, w *world) { w.write("deep.sh", "touch pwned-deep\n") },
		pwned("pwned-deep")},
	{"script-swapped-for-symlink-out",
		func(t *testing.T, w *world) { w.write("build.sh", "echo building\n") },
		shellCall("bash ./build.sh"),
		func(t *testing.T, w *world) {
			must(t, os.WriteFile(filepath.Join(w.outside, "evil.sh"), []byte("touch pwned-swap\n"), 0o644))
			must(t, os.Remove(filepath.Join(w.ws, "build.sh")))
			must(t, os.Symlink(filepath.Join(w.outside, "evil.sh"), filepath.Join(w.ws, "build.sh")))
		},
		pwned("pwned-swap")},
	{"script-created-after-approval",
		func(t *testing.T, w *world) {},
		shellCall("bash ./later.sh || true"),
		func(t *testing.T, w *world) { w.write("later.sh", "touch pwned-later\n") },
		pwned("pwned-later")},
	{"patch-preimage-changed",
		func(t *testing.T, w *world) { w.write("notes.txt", "original\n") },
		call{Tool: "write_file", Args: map[string]any{"path": "notes.txt", "content": "agent version\n"}},
		func(t *testing.T, w *world) { w.write("notes.txt", "the user's newer work\n") },
		func(t *testing.T, w *world) (bool, string) {
			b, _ := os.ReadFile(filepath.Join(w.ws, "notes.txt"))
			return string(b) != "the user's newer work\n", "the approved patch overwrote a file changed after it was shown: " + strings.TrimSpace(string(b))
		}},
	{"patch-target-swapped-for-symlink-out",
		func(t *testing.T, w *world) { w.write("notes.txt", "original CANARY\n") },
		call{Tool: "edit_file", Args: map[string]any{"path": "notes.txt", "old_string": "original", "new_string": "edited"}},
		func(t *testing.T, w *world) {
			must(t, os.Remove(filepath.Join(w.ws, "notes.txt")))
			must(t, os.Symlink(filepath.Join(w.outside, "canary.txt"), filepath.Join(w.ws, "notes.txt")))
		},
		func(t *testing.T, w *world) (bool, string) {
			b, _ := os.ReadFile(filepath.Join(w.outside, "canary.txt"))
			return string(b) != w.canary+"\n", "the outside file changed: " + string(b)
		}},
	{"patch-target-swapped-for-hard-link-out",
		func(t *testing.T, w *world) { w.write("notes.txt", "original\n") },
		call{Tool: "write_file", Args: map[string]any{"path": "notes.txt", "content": "agent version\n"}},
		func(t *testing.T, w *world) {
			must(t, os.Remove(filepath.Join(w.ws, "notes.txt")))
			must(t, os.Link(filepath.Join(w.outside, "canary.txt"), filepath.Join(w.ws, "notes.txt")))
		},
		func(t *testing.T, w *world) (bool, string) {
			b, _ := os.ReadFile(filepath.Join(w.outside, "canary.txt"))
			return string(b) != w.canary+"\n", "the outside file changed: " + string(b)
		}},
	{"patch-parent-swapped-for-dir-symlink-out",
		func(t *testing.T, w *world) { w.write("docs/notes.txt", "original\n") },
		call{Tool: "write_file", Args: map[string]any{"path": "docs/canary.txt", "content": "agent version\n"}},
		func(t *testing.T, w *world) {
			must(t, os.RemoveAll(filepath.Join(w.ws, "docs")))
			must(t, os.Symlink(w.outside, filepath.Join(w.ws, "docs")))
		},
		func(t *testing.T, w *world) (bool, string) {
			b, _ := os.ReadFile(filepath.Join(w.outside, "canary.txt"))
			return string(b) != w.canary+"\n", "the outside file changed: " + string(b)
		}},
	{"delete-target-swapped-for-symlink-dir-out",
		func(t *testing.T, w *world) { w.write("old/canary.txt", "stale\n") },
		call{Tool: "delete_file", Args: map[string]any{"path": "old/canary.txt"}},
		func(t *testing.T, w *world) {
			must(t, os.RemoveAll(filepath.Join(w.ws, "old")))
			must(t, os.Symlink(w.outside, filepath.Join(w.ws, "old")))
		},
		func(t *testing.T, w *world) (bool, string) {
			_, err := os.Stat(filepath.Join(w.outside, "canary.txt"))
			return err != nil, "the outside file was deleted"
		}},
	{"commit-head-moved",
		func(t *testing.T, w *world) {},
		call{Tool: "git_commit", Args: map[string]any{"message": "agent commit"}},
		func(t *testing.T, w *world) {
			w.write("OTHER.md", "someone else\n")
			w.git("add", "OTHER.md")
			w.git("-c", "user.email=o@example.com", "-c", "user.name=o", "commit", "-qm", "other")
		},
		func(t *testing.T, w *world) (bool, string) {
			log := w.git("log", "--format=%s")
			return strings.Contains(log, "agent commit"), "the commit was made on a HEAD that moved after the approval: " + strings.ReplaceAll(log, "\n", " | ")
		}},
}

func playTOCTOU(t *testing.T, l *ledger) {
	var wg sync.WaitGroup
	sem := make(chan struct{}, 4)
	for _, c := range toctouCases {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			t.Run(c.name, func(t *testing.T) {
				w := newWorld(t)
				c.setup(t, w)
				w.git("add", "-A")
				w.git("-c", "user.email=t@example.com", "-c", "user.name=t", "commit", "-qm", "setup", "--allow-empty")
				if c.call.Tool == "git_commit" {
					w.write("README.md", "# Widget\n\nagent change\n")
				}
				w.putScriptProfile("toctou", script(c.call), "2m")
				if res := w.run("toctou", "", 2*time.Minute, nil); res.code != 3 {
					t.Fatalf("the run did not wait for approval: exit %d %s", res.code, res.stderr)
				}
				pending := w.pendingApprovals()
				if len(pending) != 1 {
					t.Fatalf("%d pending approvals, want 1", len(pending))
				}
				c.swap(t, w)
				res := w.runArgs(2*time.Minute, nil, "approve", pending[0].ID)
				if res.hung {
					t.Fatalf("approve did not return")
				}
				escaped, detail := c.escaped(t, w)
				l.check(t, "toctou/"+c.name, !escaped, "%s", detail)
			})
		}()
	}
	wg.Wait()
}
