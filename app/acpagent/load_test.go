package acpagent

import (
	"context"
	"testing"

	acp "github.com/coder/acp-go-sdk"
)

// TestLoadNamesNoFileOutsideItsDirectory: session/load reads a file named
// by the editor's session id; an id that is not one NewSession made is
// refused before any path is built (the Agent has no core here: touching
// the data directory would panic).
func TestLoadNamesNoFileOutsideItsDirectory(t *testing.T) {
	a := &Agent{sessions: map[string]*session{}}
	for _, id := range []string{"../../etc/passwd", "acp_../../../x", "acp_0123456789abcdef01234567/..", "", "ACP_0123456789ABCDEF01234567"} {
		_, err := a.LoadSession(context.Background(), acp.LoadSessionRequest{SessionId: acp.SessionId(id), Cwd: "/ws"})
		re, ok := err.(*acp.RequestError)
		if !ok || re.Data.(map[string]string)["code"] != "not_found" {
			t.Errorf("load %q: %v, want not_found", id, err)
		}
	}
	if !sessionIDs.MatchString("acp_" + randomHex(12)) {
		t.Errorf("the ids NewSession makes do not match the pattern load accepts")
	}
}
