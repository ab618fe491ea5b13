package approval

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"agenthub/backend"
)

const testWS = "ws_0123456789abcdef0123456789abcdef"

func gitStatusGrant(t *testing.T) Grant {
	t.Helper()
	g, err := GrantPattern(Action{Kind: backend.ActionShell, Tool: "run_shell", Command: "git status --short"})
	if err != nil {
		t.Fatal(err)
	}
	return g
}

// TestRuleLocation: the data directory is the default; the repository only
// when the setting says so; nothing configured is the repository (the
// behaviour before issue 21, kept for an engine without a data directory).
func TestRuleLocation(t *testing.T) {
	dir := t.TempDir()
	for _, tc := range []struct {
		name  string
		rules *Rules
		want  backend.RuleLocation
	}{
		{"no rules", nil, backend.RuleLocation{Site: "repository", Path: PolicyPath}},
		{"no setting", &Rules{Dir: dir}, backend.RuleLocation{Site: "data", Path: "policy/" + testWS + ".toml"}},
		{"data", &Rules{Dir: dir, Site: func() (string, error) { return "data", nil }},
			backend.RuleLocation{Site: "data", Path: "policy/" + testWS + ".toml"}},
		{"repository", &Rules{Dir: dir, Site: func() (string, error) { return "repository", nil }},
			backend.RuleLocation{Site: "repository", Path: PolicyPath}},
		{"unknown value", &Rules{Dir: dir, Site: func() (string, error) { return "elsewhere", nil }},
			backend.RuleLocation{Site: "data", Path: "policy/" + testWS + ".toml"}},
		{"setting unreadable", &Rules{Dir: dir, Site: func() (string, error) { return "repository", errors.New("locked") }},
			backend.RuleLocation{Site: "data", Path: "policy/" + testWS + ".toml"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := tc.rules.Location(testWS); got != tc.want {
				t.Fatalf("Location = %+v, want %+v", got, tc.want)
			}
		})
	}
}

// TestDataRuleLeavesRepositoryClean: "always allow" with the default
// setting writes under the data directory, the gate applies it, and the
// repository's git status stays empty.
func TestDataRuleLeavesRepositoryClean(t *testing.T) {
	if _, err := exec.LookPath("git"); err != nil {
		t.Fatal("git is required for this test")
	}
	repo, data := t.TempDir(), filepath.Join(t.TempDir(), "policy")
	for _, args := range [][]string{{"init", "-q"}, {"config", "user.email", "t@example.com"}, {"config", "user.name", "t"}} {
		if out, err := exec.Command("git", append([]string{"-C", repo}, args...)...).CombinedOutput(); err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
	}
	rules := &Rules{Dir: data}
	loc := rules.Location(testWS)
	change, err := rules.Append(loc, repo, testWS, gitStatusGrant(t))
	if err != nil {
		t.Fatal(err)
	}
	if change.RuleID == "" || !strings.Contains(change.Rule, change.RuleID) {
		t.Fatalf("rule id %q, rule %q", change.RuleID, change.Rule)
	}
	if fi, err := os.Stat(filepath.Join(data, testWS+".toml")); err != nil || fi.Mode().Perm() != 0o600 {
		t.Fatalf("the rules file in the data directory: %v %v, want mode 0600", fi, err)
	}
	if fi, err := os.Stat(data); err != nil || fi.Mode().Perm() != 0o700 {
		t.Fatalf("the data directory's policy folder: %v %v, want mode 0700", fi, err)
	}
	out, err := exec.Command("git", "-C", repo, "status", "--porcelain", "--untracked-files=all").CombinedOutput()
	if err != nil || len(out) != 0 {
		t.Fatalf("git status after always allow = %q (%v), want clean", out, err)
	}
	gate := NewGate(func(string) (string, error) { return repo, nil }).WithRules(rules)
	r := gate.Decide(testWS, Action{Kind: backend.ActionShell, Tool: "run_shell", Command: "git status --short"})
	if r.Verdict != backend.Allow || r.RuleID != change.RuleID {
		t.Fatalf("gate = %s by %s, want allow by %s", r.Verdict, r.RuleID, change.RuleID)
	}
	// Another workspace does not get the rule.
	other := gate.Decide("ws_ffffffffffffffffffffffffffffffff", Action{Kind: backend.ActionShell, Tool: "run_shell", Command: "git status --short"})
	if other.Verdict == backend.Allow {
		t.Fatal("a rule of one workspace allowed a command in another")
	}
	// The repository's own policy still reads, and a deny there wins.
	if err := os.MkdirAll(filepath.Join(repo, ".agenthub"), 0o755); err != nil {
		t.Fatal(err)
	}
	deny := "version = 1\n[[shell]]\nid = \"no-git\"\nprefix = [\"git\"]\nverdict = \"deny\"\n"
	if err := os.WriteFile(filepath.Join(repo, PolicyPath), []byte(deny), 0o644); err != nil {
		t.Fatal(err)
	}
	gate = NewGate(func(string) (string, error) { return repo, nil }).WithRules(rules)
	if r := gate.Decide(testWS, Action{Kind: backend.ActionShell, Tool: "run_shell", Command: "git status --short"}); r.Verdict != backend.Deny {
		t.Fatalf("with a repository deny rule: %s by %s", r.Verdict, r.RuleID)
	}
}

// TestBrokenDataRulesAsk: a rules file in the data directory that does not
// parse makes every action ask, as a broken repository policy does.
func TestBrokenDataRulesAsk(t *testing.T) {
	repo, data := t.TempDir(), t.TempDir()
	if err := os.WriteFile(filepath.Join(data, testWS+".toml"), []byte("version = 1\n[[shell]]\nverdict = \"maybe\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	gate := NewGate(func(string) (string, error) { return repo, nil }).WithRules(&Rules{Dir: data})
	r := gate.Decide(testWS, Action{Kind: backend.ActionRead, Path: "README.md"})
	if r.Verdict != backend.Ask || r.RuleID != RuleBrokenPolicy {
		t.Fatalf("read under a broken data rules file: %s by %s", r.Verdict, r.RuleID)
	}
	if strings.Contains(r.Reason, data) {
		t.Fatalf("the reason shows a machine path: %s", r.Reason)
	}
}

// TestDataFileRefusesCraftedIDs: the workspace id names a file, so an id
// that could climb out of the folder is refused before any file access.
func TestDataFileRefusesCraftedIDs(t *testing.T) {
	data := t.TempDir()
	rules := &Rules{Dir: filepath.Join(data, "policy")}
	for _, id := range []string{"", "..", "../ws_1", "ws_1/../../x", "ws_1.toml", "ws_1\x00", "/etc/passwd", "ws_" + strings.Repeat("a", 65), "WS_1"} {
		if _, err := DataFile(id); backend.CodeOf(err) != backend.CodeInvalidInput {
			t.Errorf("DataFile(%q) = %v, want invalid_input", id, err)
		}
		if _, err := rules.Append(backend.RuleLocation{Site: "data"}, data, id, Grant{Kind: backend.ActionCommit}); err == nil {
			t.Errorf("Append for workspace %q succeeded", id)
		}
		if _, err := rules.Remove("data", data, id, "always-commit-1"); err == nil {
			t.Errorf("Remove for workspace %q succeeded", id)
		}
	}
	entries, _ := os.ReadDir(data)
	for _, e := range entries {
		if e.Name() != "policy" {
			t.Errorf("a crafted id wrote %s", e.Name())
		}
	}
}

// TestRemoveRule: revoking cuts out exactly the rule's table and the
// comment AddRule wrote above it; every other byte stays.
func TestRemoveRule(t *testing.T) {
	hand := "# my policy\nversion = 1\n\n# keep builds fast\n[[shell]]\nprefix = [\"make\"]\nverdict = \"allow\" # trailing\n\n# docs are fine\n[[write]]\nglob = \"docs/**\"\nverdict = \"allow\"\n"
	g1 := gitStatusGrant(t)
	g2 := Grant{Kind: backend.ActionNetwork, Tool: "fetch_url", Method: "GET", Host: "example.com"}
	one, err := AddRule([]byte(hand), g1)
	if err != nil {
		t.Fatal(err)
	}
	two, err := AddRule(one, g2)
	if err != nil {
		t.Fatal(err)
	}
	p, _ := ParsePolicy(two)
	ids := map[backend.ActionKind]string{backend.ActionShell: p.Shell[1].ID, backend.ActionNetwork: p.Network[0].ID}

	for _, tc := range []struct {
		name, text, id, want string
	}{
		{"the last always rule", string(two), ids[backend.ActionNetwork], string(one)},
		{"an always rule in the middle", string(two), ids[backend.ActionShell],
			hand + strings.TrimPrefix(string(two), string(one))},
		{"a hand-written rule by position", hand, "shell[1]",
			"# my policy\nversion = 1\n\n# keep builds fast\n\n# docs are fine\n[[write]]\nglob = \"docs/**\"\nverdict = \"allow\"\n"},
		{"the only always rule", string(one), ids[backend.ActionShell], hand},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := RemoveRule([]byte(tc.text), tc.id)
			if err != nil {
				t.Fatal(err)
			}
			if tc.name == "an always rule in the middle" {
				// The network rule stays, the shell one goes.
				q, err := ParsePolicy(got)
				if err != nil || len(q.Shell) != 1 || len(q.Network) != 1 || len(q.Write) != 1 {
					t.Fatalf("after revoke: %+v %v\n%s", q, err, got)
				}
				return
			}
			if string(got) != tc.want {
				t.Fatalf("RemoveRule:\n%s\nwant:\n%s", got, tc.want)
			}
		})
	}

	t.Run("refused", func(t *testing.T) {
		for _, tc := range []struct{ text, id string }{
			{string(two), "always-shell-99"},
			{string(two), "../../shell[1]"},
			{"version = 1\nshell = [{prefix = [\"make\"], verdict = \"allow\"}]\n", "shell[1]"},
			{"version = 1\n[[shell]]\nprefix = [\"make\"]\nverdict = \"allow\"\n[shell.extra]\n", "shell[1]"},
		} {
			if got, err := RemoveRule([]byte(tc.text), tc.id); err == nil {
				t.Errorf("RemoveRule(%q) succeeded:\n%s", tc.id, got)
			}
		}
	})
}

// TestRevokeThenAddKeepsNamesUnique: after a revocation the next rule gets
// a name no rule has, so a trace or a revocation never means two rules.
func TestRevokeThenAddKeepsNamesUnique(t *testing.T) {
	repo, data := t.TempDir(), t.TempDir()
	rules := &Rules{Dir: data}
	loc := rules.Location(testWS)
	var ids []string
	for _, host := range []string{"a.example", "b.example", "c.example"} {
		c, err := rules.Append(loc, repo, testWS, Grant{Kind: backend.ActionNetwork, Tool: "fetch_url", Method: "GET", Host: host})
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, c.RuleID)
	}
	if _, err := rules.Remove(backend.RuleSiteData, repo, testWS, ids[0]); err != nil {
		t.Fatal(err)
	}
	c, err := rules.Append(loc, repo, testWS, Grant{Kind: backend.ActionNetwork, Tool: "fetch_url", Method: "GET", Host: "d.example"})
	if err != nil {
		t.Fatal(err)
	}
	text, _ := rules.ReadData(testWS)
	p, err := ParsePolicy(text)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, r := range p.Network {
		if seen[r.ID] {
			t.Fatalf("two rules named %s after a revocation:\n%s", r.ID, text)
		}
		seen[r.ID] = true
	}
	if !seen[c.RuleID] || seen[ids[0]] || len(p.Network) != 3 {
		t.Fatalf("rules %v after revoking %s and adding %s:\n%s", seen, ids[0], c.RuleID, text)
	}
}

// TestDataRuleInjection: the issue 14 attack against the data directory's
// file, then revoked: the file holds exactly the one rule shown, and
// revoking it leaves the file as it was.
func TestDataRuleInjection(t *testing.T) {
	for _, payload := range injectionPayloads {
		repo, data := t.TempDir(), t.TempDir()
		rules := &Rules{Dir: data}
		g, err := GrantPattern(Action{Kind: backend.ActionShell, Tool: "run_shell", Argv: []string{"echo", payload}})
		if err != nil {
			continue
		}
		c, err := rules.Append(rules.Location(testWS), repo, testWS, g)
		if err != nil {
			t.Errorf("Append(%q): %v", payload, err)
			continue
		}
		p, err := ParsePolicy(c.After)
		if err != nil || len(p.Write)+len(p.Shell)+len(p.Network)+len(p.Git)+len(p.MCP) != 1 {
			t.Errorf("Append(%q) wrote %+v (%v):\n%s", payload, p, err, c.After)
			continue
		}
		back, err := rules.Remove(backend.RuleSiteData, repo, testWS, c.RuleID)
		if err != nil {
			t.Errorf("Remove after Append(%q): %v\n%s", payload, err, c.After)
			continue
		}
		if q, err := ParsePolicy(back.After); err != nil || len(q.Shell) != 0 {
			t.Errorf("after revoking: %+v %v\n%s", q, err, back.After)
		}
	}
}
