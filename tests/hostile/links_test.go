package hostile

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// linkTrick is a link a hostile repository ships (or a hostile command
// leaves): make creates it in the workspace, pointing at the outside file
// target (absolute), and returns the path the agent names.
type linkTrick struct {
	name string
	make func(t *testing.T, w *world, target string) string
}

func symlink(t *testing.T, oldname, newname string) {
	t.Helper()
	must(t, os.MkdirAll(filepath.Dir(newname), 0o755))
	must(t, os.Symlink(oldname, newname))
}

func relTo(t *testing.T, from, to string) string {
	t.Helper()
	r, err := filepath.Rel(from, to)
	must(t, err)
	return r
}

var linkTricks = []linkTrick{
	{"relative-file", func(t *testing.T, w *world, target string) string {
		symlink(t, relTo(t, w.ws, target), filepath.Join(w.ws, "notes-link.txt"))
		return "notes-link.txt"
	}},
	{"absolute-file", func(t *testing.T, w *world, target string) string {
		symlink(t, target, filepath.Join(w.ws, "abs-link.txt"))
		return "abs-link.txt"
	}},
	{"nested-relative", func(t *testing.T, w *world, target string) string {
		symlink(t, relTo(t, filepath.Join(w.ws, "docs", "deep"), target), filepath.Join(w.ws, "docs", "deep", "link.md"))
		return "docs/deep/link.md"
	}},
	{"dir-link", func(t *testing.T, w *world, target string) string {
		symlink(t, relTo(t, w.ws, filepath.Dir(target)), filepath.Join(w.ws, "vendor"))
		return "vendor/" + filepath.Base(target)
	}},
	{"dir-link-absolute", func(t *testing.T, w *world, target string) string {
		symlink(t, filepath.Dir(target), filepath.Join(w.ws, "third_party"))
		return "third_party/" + filepath.Base(target)
	}},
	{"chain-in-then-out", func(t *testing.T, w *world, target string) string {
		symlink(t, relTo(t, filepath.Join(w.ws, "sub"), target), filepath.Join(w.ws, "sub", "second"))
		symlink(t, "sub/second", filepath.Join(w.ws, "first"))
		return "first"
	}},
	{"chain-three", func(t *testing.T, w *world, target string) string {
		symlink(t, target, filepath.Join(w.ws, "c3"))
		symlink(t, "c3", filepath.Join(w.ws, "c2"))
		symlink(t, "c2", filepath.Join(w.ws, "c1"))
		return "c1"
	}},
	{"dir-chain", func(t *testing.T, w *world, target string) string {
		symlink(t, relTo(t, w.ws, filepath.Dir(target)), filepath.Join(w.ws, "out"))
		symlink(t, "out", filepath.Join(w.ws, "lib"))
		return "lib/" + filepath.Base(target)
	}},
	{"link-then-dotdot", func(t *testing.T, w *world, target string) string {
		must(t, os.MkdirAll(filepath.Join(filepath.Dir(target), "inner"), 0o755))
		symlink(t, filepath.Join(filepath.Dir(target), "inner"), filepath.Join(w.ws, "inner"))
		return "inner/../" + filepath.Base(target)
	}},
	{"proc-root-link", func(t *testing.T, w *world, target string) string {
		symlink(t, "/proc/self/root", filepath.Join(w.ws, "rootfs"))
		return "rootfs" + target
	}},
	{"dangling-to-outside", func(t *testing.T, w *world, target string) string {
		must(t, os.Remove(target))
		symlink(t, target, filepath.Join(w.ws, "new-file.txt"))
		return "new-file.txt"
	}},
	{"hard-link", func(t *testing.T, w *world, target string) string {
		must(t, os.Link(target, filepath.Join(w.ws, "hard.txt")))
		return "hard.txt"
	}},
	{"hard-link-nested", func(t *testing.T, w *world, target string) string {
		must(t, os.MkdirAll(filepath.Join(w.ws, "data"), 0o755))
		must(t, os.Link(target, filepath.Join(w.ws, "data", "copy.txt")))
		return "data/copy.txt"
	}},
}

// playLinks plays every link trick with every file tool (one run per tool,
// every approval approved): the outside file is never read, changed,
// created or deleted through the link.
func playLinks(t *testing.T, l *ledger) {
	var wg sync.WaitGroup
	for _, tool := range pathTools {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t.Run(tool.name, func(t *testing.T) { playLinkTool(t, l, tool) })
		}()
	}
	wg.Wait()
}

func playLinkTool(t *testing.T, l *ledger, tool pathTool) {
	w := newWorld(t)
	type pending struct {
		id, file, canary, marker string
		dangling                 bool
	}
	var cases []pending
	var calls []call
	for i, trick := range linkTricks {
		dir := filepath.Join(w.outside, fmt.Sprintf("t%02d", i))
		must(t, os.MkdirAll(dir, 0o755))
		c := pending{id: "link/" + tool.name + "/" + trick.name, file: filepath.Join(dir, "target.txt"),
			canary: fmt.Sprintf("CANARY-LINK-%s-%02d-SEEN", tool.name, i), marker: fmt.Sprintf("PWNED-LINK-%s-%02d", tool.name, i),
			dangling: trick.name == "dangling-to-outside"}
		must(t, os.WriteFile(c.file, []byte(c.canary+"\n"), 0o644))
		path := trick.make(t, w, c.file)
		cases = append(cases, c)
		calls = append(calls, call{Tool: tool.name, Args: tool.args(path, c.marker)})
	}
	w.putScriptProfile("links", script(calls...), "5m")
	res := w.run("links", "approve", 4*time.Minute, nil)
	if res.hung || terminal(res.events) == "" {
		t.Fatalf("the run did not end (hung %v, exit %d): %s", res.hung, res.code, res.stderr)
	}
	results := toolResults(res.events)
	files := w.dataFiles()
	for i, c := range cases {
		var leaks []string
		if i < len(results) && strings.Contains(results[i].text, c.canary) {
			leaks = append(leaks, "the tool result holds the outside file's text")
		}
		if i < len(results) && tool.name == "list_dir" && strings.Contains(results[i].text, "target.txt") {
			leaks = append(leaks, "the listing names the outside directory's files")
		}
		if where := leakIn(files, c.canary); where != "" {
			leaks = append(leaks, "the data directory holds it ("+where+")")
		}
		now, err := os.ReadFile(c.file)
		switch {
		case c.dangling && err == nil:
			leaks = append(leaks, fmt.Sprintf("a file was created outside the workspace through the link: %q", now))
		case c.dangling:
		case err != nil:
			leaks = append(leaks, "the outside file is gone: "+err.Error())
		case string(now) != c.canary+"\n":
			leaks = append(leaks, fmt.Sprintf("the outside file changed to %q", now))
		}
		if tool.write && markerOutside(w, c.marker) {
			leaks = append(leaks, "a file outside the workspace holds the written text")
		}
		if i >= len(results) {
			leaks = append(leaks, fmt.Sprintf("no tool result (the run ended with %s after %d results)", terminal(res.events), len(results)))
		}
		l.check(t, c.id, len(leaks) == 0, "%s", strings.Join(leaks, "; "))
	}
}
