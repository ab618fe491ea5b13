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

// pathPayload is a hostile path. In Template, {O} is the outside directory's
// absolute path, {W} the workspace's and {F} the case's own target file in
// the outside directory, so each case's effect is its own.
type pathPayload struct {
	name     string
	template string
}

// pathPayloads are the escapes a hostile model tries with every file tool.
var pathPayloads = []pathPayload{
	{"dotdot", "../outside/{F}"},
	{"dotdot-dot", "./../outside/{F}"},
	{"dotdot-deep", "a/b/../../../outside/{F}"},
	{"dotdot-through-file", "README.md/../../outside/{F}"},
	{"dotdot-trailing-slash", "../outside/{F}/"},
	{"dotdot-doubled-slash", "..//outside//{F}"},
	{"dotdot-many", strings.Repeat("../", 40) + "{O}/{F}"},
	{"absolute", "{O}/{F}"},
	{"absolute-dotdot", "{W}/../outside/{F}"},
	{"absolute-double-slash", "/{O}/{F}"},
	{"tilde", "~/../../{O}/{F}"},
	{"file-url", "file://{O}/{F}"},
	{"nul-suffix", "README.md\x00../outside/{F}"},
	{"nul-prefix", "../outside/{F}\x00README.md"},
	{"nul-only-dir", "\x00/../outside/{F}"},
	{"unicode-two-dot-leader", "\u2025/outside/{F}"},
	{"unicode-fullwidth-dots", "\uff0e\uff0e/outside/{F}"},
	{"unicode-division-slash", "..\u2215outside\u2215{F}"},
	{"unicode-fullwidth-solidus", "..\uff0foutside\uff0f{F}"},
	{"unicode-combining-dot", ".\u0307./outside/{F}"},
	{"percent-encoded", "%2e%2e/outside/{F}"},
	{"percent-encoded-slash", "..%2foutside%2f{F}"},
	{"overlong-utf8", "\xc0\xae\xc0\xae/outside/{F}"},
	{"windows-backslash", "..\\outside\\{F}"},
	{"windows-mixed", "..\\../outside/{F}"},
	{"windows-drive", "C:\\..\\outside\\{F}"},
	{"windows-drive-relative", "C:../outside/{F}"},
	{"windows-unc", "\\\\localhost\\c$\\{F}"},
	{"windows-device", "\\\\.\\..\\outside\\{F}"},
	{"case-dotdot-outside", "../OUTSIDE/../outside/{F}"},
	{"long-component", strings.Repeat("x", 300) + "/../../outside/{F}"},
	{"long-path", strings.Repeat("d/", 2100) + strings.Repeat("../", 2101) + "outside/{F}"},
	{"proc-root", "/proc/self/root{O}/{F}"},
	{"proc-cwd", "/proc/self/cwd/../outside/{F}"},
	{"dev-fd-cwd", "/dev/fd/../../proc/self/cwd/../outside/{F}"},
}

// pathTool is one file tool and how a payload becomes its arguments; reads
// leak the target's text, writes change or delete it.
type pathTool struct {
	name  string
	write bool
	args  func(path, marker string) map[string]any
}

var pathTools = []pathTool{
	{"read_file", false, func(p, _ string) map[string]any { return map[string]any{"path": p} }},
	{"list_dir", false, func(p, _ string) map[string]any { return map[string]any{"path": filepath.Dir(p)} }},
	{"search", false, func(p, _ string) map[string]any { return map[string]any{"path": p, "pattern": "CANARY"} }},
	{"git_diff", false, func(p, _ string) map[string]any { return map[string]any{"path": p} }},
	{"write_file", true, func(p, m string) map[string]any { return map[string]any{"path": p, "content": m + "\n"} }},
	{"edit_file", true, func(p, m string) map[string]any {
		return map[string]any{"path": p, "old_string": "CANARY", "new_string": m}
	}},
	{"delete_file", true, func(p, _ string) map[string]any { return map[string]any{"path": p} }},
}

// playPaths plays every payload with every file tool, one run per tool with
// every approval approved: a read must never return the target's text (in
// the events or anywhere in the data directory), a write, edit or delete
// must never change it, whatever was approved.
func playPaths(t *testing.T, l *ledger) {
	var wg sync.WaitGroup
	for _, tool := range pathTools {
		wg.Add(1)
		go func() {
			defer wg.Done()
			t.Run(tool.name, func(t *testing.T) { playPathTool(t, l, tool) })
		}()
	}
	wg.Wait()
}

func playPathTool(t *testing.T, l *ledger, tool pathTool) {
	w := newWorld(t)
	type pending struct {
		id, file, canary, marker string
	}
	var cases []pending
	var calls []call
	for i, p := range pathPayloads {
		c := pending{id: "path/" + tool.name + "/" + p.name, file: fmt.Sprintf("target-%02d.txt", i)}
		c.canary = fmt.Sprintf("CANARY-%s-%02d-SEEN", tool.name, i)
		c.marker = fmt.Sprintf("PWNED-%s-%02d", tool.name, i)
		must(t, os.WriteFile(filepath.Join(w.outside, c.file), []byte(c.canary+"\n"), 0o644))
		path := strings.NewReplacer("{O}", w.outside, "{W}", w.ws, "{F}", c.file).Replace(p.template)
		cases = append(cases, c)
		calls = append(calls, call{Tool: tool.name, Args: tool.args(path, c.marker)})
	}
	w.putScriptProfile("paths", script(calls...), "5m")
	res := w.run("paths", "approve", 4*time.Minute, nil)
	if res.hung || terminal(res.events) == "" {
		t.Fatalf("the run did not end (hung %v, exit %d): %s", res.hung, res.code, res.stderr)
	}
	results := toolResults(res.events)
	files := w.dataFiles()
	for i, c := range cases {
		var leaks []string
		if i < len(results) && tool.name == "list_dir" && strings.Contains(results[i].text, "canary.txt") {
			leaks = append(leaks, "the listing names the outside directory's files")
		}
		if i < len(results) && strings.Contains(results[i].text, c.canary) {
			leaks = append(leaks, "the tool result holds the outside file's text")
		}
		if where := leakIn(files, c.canary); where != "" {
			leaks = append(leaks, "the data directory holds it ("+where+")")
		}
		if strings.Contains(res.stdout, c.canary) {
			leaks = append(leaks, "stdout holds it")
		}
		now, err := os.ReadFile(filepath.Join(w.outside, c.file))
		switch {
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

// markerOutside reports whether any file under the test's base directory
// but outside the workspace holds marker.
func markerOutside(w *world, marker string) bool {
	base := filepath.Dir(w.ws)
	found := false
	_ = filepath.WalkDir(base, func(p string, d os.DirEntry, err error) error {
		if err != nil || found {
			return nil
		}
		if d.IsDir() && (p == w.ws || p == w.home) {
			return filepath.SkipDir
		}
		if !d.IsDir() {
			if b, err := os.ReadFile(p); err == nil && strings.Contains(string(b), marker) {
				found = true
			}
		}
		return nil
	})
	return found
}
