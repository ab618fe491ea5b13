package hostile

import (
	"bufio"
	"fmt"
	"os"
	"sort"
	"strings"
	"sync"
	"testing"
)

// category is one kind of attack and the function that plays its cases.
type category struct {
	name  string
	title string
	play  func(t *testing.T, l *ledger)
}

// categories is the whole suite, in report order. Every category's play
// records each case it owns exactly once, escaped or held.
var categories = []category{
	{"path", "Path escapes (../, absolute, unicode, NUL, long, case, Windows separators)", playPaths},
	{"link", "Symlink and hard-link tricks", playLinks},
	{"toctou", "TOCTOU: changed between approval and execution", playTOCTOU},
	{"wrapper", "Shell wrappers around a denied command", playWrappers},
	{"env", "Environment tricks under an allow rule", playEnv},
	{"inject", "Policy injection through \"always allow\"", playInjection},
	{"check", "Checks that disagree with the gate", playChecks},
	{"secret", "Secrets in 40+ formats (stored, streamed, exported)", playSecrets},
	{"fifo", "FIFOs, sockets and devices", playFIFOs},
	{"bomb", "Argument bombs (depth, size)", playBombs},
	{"git", "git_commit of what the file tools refuse", playGit},
	{"audit", "Audit tampering", playAudit},
	{"confine", "Approved commands reaching past the workspace (OS confinement)", playConfine},
	{"proc", "Processes outliving AgentHub", playProcs},
	{"cli", "Real agent CLIs against scripted model servers", playRealCLIs},
	{"agent", "Codex, MCP servers and ACP agents reaching past their confinement or key", playAgentProcs},
}

// outcome is one case's verdict: escaped means the invariant broke.
type outcome struct {
	id      string
	escaped bool
	detail  string
}

// ledger collects every case's outcome.
type ledger struct {
	mu       sync.Mutex
	outcomes map[string]outcome
	finished map[string]bool // categories that played to the end
	skipped  []string        // id prefixes not played here (a CLI not installed)
}

// skip notes that the cases under prefix were not played on this machine.
func (l *ledger) skip(prefix string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.skipped = append(l.skipped, prefix)
}

// record notes a case's outcome; an id recorded twice is a suite bug.
func (l *ledger) record(t *testing.T, id string, escaped bool, detail string) {
	t.Helper()
	l.mu.Lock()
	defer l.mu.Unlock()
	if _, dup := l.outcomes[id]; dup {
		t.Errorf("case %s recorded twice", id)
		return
	}
	l.outcomes[id] = outcome{id: id, escaped: escaped, detail: detail}
	if escaped && testing.Verbose() {
		t.Logf("ESCAPE %s: %s", id, detail)
	}
}

// held records a case whose invariant held when ok, else an escape.
func (l *ledger) check(t *testing.T, id string, ok bool, detail string, args ...any) {
	t.Helper()
	l.record(t, id, !ok, fmt.Sprintf(detail, args...))
}

// TestHostile plays every category (in parallel), then compares what
// escaped with testdata/known_open.txt and prints the counts.
func TestHostile(t *testing.T) {
	l := &ledger{outcomes: map[string]outcome{}, finished: map[string]bool{}}
	t.Run("cases", func(t *testing.T) {
		for _, c := range categories {
			t.Run(c.name, func(t *testing.T) {
				t.Parallel()
				c.play(t, l)
				if !t.Failed() && !t.Skipped() {
					l.mu.Lock()
					l.finished[c.name] = true
					l.mu.Unlock()
				}
			})
		}
	})
	known := loadKnownOpen(t)
	table := l.reconcile(t, known)
	t.Log("\n" + table)
	if out := os.Getenv("HOSTILE_TABLE"); out != "" {
		must(t, os.WriteFile(out, []byte(table), 0o644))
	}
}

// loadKnownOpen reads the ledger of cases that still escape: one id per
// line, "#" starts a comment.
func loadKnownOpen(t *testing.T) map[string]bool {
	f, err := os.Open("testdata/known_open.txt")
	must(t, err)
	defer f.Close()
	known := map[string]bool{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		if i := strings.IndexByte(line, '#'); i >= 0 {
			line = line[:i]
		}
		if id := strings.TrimSpace(line); id != "" {
			known[id] = true
		}
	}
	must(t, sc.Err())
	return known
}

// reconcile fails the test for an escape not on the list and for a listed
// case that held (the list must be kept exactly true) or does not exist,
// and returns the table of counts per category.
func (l *ledger) reconcile(t *testing.T, known map[string]bool) string {
	l.mu.Lock()
	defer l.mu.Unlock()
	ids := make([]string, 0, len(l.outcomes))
	for id := range l.outcomes {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		o := l.outcomes[id]
		switch {
		case o.escaped && !known[id]:
			t.Errorf("ESCAPE (not in testdata/known_open.txt): %s: %s", id, o.detail)
		case !o.escaped && known[id]:
			t.Errorf("HELD but listed in testdata/known_open.txt (remove it): %s", id)
		}
	}
	for id := range known {
		cat, _, _ := strings.Cut(id, "/")
		skipped := false
		for _, p := range l.skipped {
			skipped = skipped || strings.HasPrefix(id, p)
		}
		if _, ok := l.outcomes[id]; !ok && l.finished[cat] && !skipped {
			t.Errorf("testdata/known_open.txt lists %s, which is not a case", id)
		}
	}
	var b strings.Builder
	b.WriteString("| Category | Cases | Held | Open |\n|---|---:|---:|---:|\n")
	var total, totalOpen int
	for _, c := range categories {
		n, open := 0, 0
		for _, id := range ids {
			if strings.HasPrefix(id, c.name+"/") {
				n++
				if l.outcomes[id].escaped {
					open++
				}
			}
		}
		if n == 0 {
			continue
		}
		total += n
		totalOpen += open
		fmt.Fprintf(&b, "| %s | %d | %d | %d |\n", c.title, n, n-open, open)
	}
	fmt.Fprintf(&b, "| **Total** | **%d** | **%d** | **%d** |\n", total, total-totalOpen, totalOpen)
	return b.String()
}
