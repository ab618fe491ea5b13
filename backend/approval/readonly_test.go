package approval

import (
	"testing"

	"agenthub/backend"
)

// TestReadOnly: the read-only class that gets the low risk label. Every
// way a "read-only" command can write, run a program or reach the network
// keeps it out.
func TestReadOnly(t *testing.T) {
	for _, tc := range []struct {
		command string
		network bool
		want    bool
	}{
		{"git status --short", false, true},
		{"git status", false, true},
		{"ls -la", false, true},
		{"git log --oneline | head -5", false, true},
		{"cat README.md && wc -l README.md", false, true},
		{"git status --short", true, false},
		{"git -c core.pager=sh status", false, false},
		{"git diff --output=x.txt", false, false},
		{"git diff --ext-diff", false, false},
		{"git commit -m x", false, false},
		{"git push", false, false},
		{"git branch -D main", false, false},
		{"ls > files.txt", false, false},
		{"cat .env", false, false},
		{"cat $FILE", false, false},
		{"GIT_EXTERNAL_DIFF=sh git diff", false, false},
		{"sudo ls", false, false},
		{"./ls", false, false},
		{"/tmp/evil/ls", false, false},
		{"find . -delete", false, false},
		{"rm -rf x", false, false},
		{"ls; rm -rf x", false, false},
		{"echo $(rm -rf x)", false, false},
		{"timeout 5 ls", false, false},
		{"python3 -c 'print(1)'", false, false},
		{"ls 'unterminated", false, false},
	} {
		a := Action{Kind: backend.ActionShell, Tool: "run_shell", Command: tc.command, Network: tc.network}
		if got := ReadOnly(a); got != tc.want {
			t.Errorf("ReadOnly(%q, network=%t) = %t, want %t", tc.command, tc.network, got, tc.want)
		}
		wantRisk := backend.RiskMedium
		if tc.want {
			wantRisk = backend.RiskLow
		}
		if got := RiskOf(a, backend.PolicyResult{Kind: backend.ActionShell}); (got == backend.RiskLow) != (wantRisk == backend.RiskLow) {
			t.Errorf("RiskOf(%q) = %s", tc.command, got)
		}
	}
	if ReadOnly(Action{Kind: backend.ActionWrite, Path: "x"}) {
		t.Error("a write is read-only")
	}
}
