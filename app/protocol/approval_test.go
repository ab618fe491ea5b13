package protocol

import (
	"encoding/json"
	"testing"

	"agenthub/backend"
)

func TestApprovalTokenRoundTrip(t *testing.T) {
	for _, c := range []struct{ id, hash string }{
		{"apr_1", "sha256:abc"},
		{"apr_1", ""},
		{"", "sha256:abc"},
	} {
		id, hash := SplitApprovalToken(ApprovalToken(c.id, c.hash))
		if id != c.id || hash != c.hash {
			t.Errorf("%q %q came back as %q %q", c.id, c.hash, id, hash)
		}
	}
	// A token without a hash (a client that invented its own id) has none,
	// so the answer it carries is refused for want of the hash shown.
	if id, hash := SplitApprovalToken("apr_1"); id != "apr_1" || hash != "" {
		t.Errorf("bare id: %q %q", id, hash)
	}
}

func TestAnswerForKeepsItsOwnDecisionID(t *testing.T) {
	a := Answer{Decision: backend.ApproveOnce, SubjectHash: "h", Hunks: []backend.HunkRef{{Path: "a", Index: 1}}}
	d := a.For("apr_1", "agui:r:apr_1")
	if d.DecisionID != "agui:r:apr_1" || d.ApprovalID != "apr_1" || d.SubjectHash != "h" || len(d.Hunks) != 1 {
		t.Errorf("%+v", d)
	}
	a.DecisionID = "mine"
	if d := a.For("apr_1", "agui:r:apr_1"); d.DecisionID != "mine" {
		t.Errorf("the client's decision id was replaced: %+v", d)
	}
	// Actor and surface are never the client's: the facade sets them.
	if d.Actor != "" || d.Surface != "" {
		t.Errorf("actor or surface from the answer: %+v", d)
	}
}

func TestPromptOf(t *testing.T) {
	for _, c := range []struct {
		name                 string
		kind                 backend.ActionKind
		preview              string
		path, cmd            string
		hunks                int
		schemaHasHunks       bool
		defaultDecisionsOnly bool
	}{
		{"a patch of two hunks", backend.ActionPatch, `{"path":"a.txt","unified":"@@","diff":{"hunks":[{},{}]}}`, "a.txt", "", 2, true, false},
		{"a new file, one hunk", backend.ActionPatch, `{"path":"n.txt","unified":"@@","diff":{"hunks":[{}]}}`, "n.txt", "", 1, true, false},
		{"a command", backend.ActionShell, `{"command":"make test"}`, "", "make test", 0, false, false},
		{"a preview of another shape", backend.ActionNetwork, `"GET https://example.com"`, "", "", 0, false, true},
	} {
		t.Run(c.name, func(t *testing.T) {
			tk := backend.ApprovalRequest{ID: "apr_1", Kind: c.kind, Title: "T", SubjectHash: "sha256:x",
				Preview: json.RawMessage(c.preview)}
			if !c.defaultDecisionsOnly {
				tk.DecisionsOffered = []backend.DecisionKind{backend.ApproveOnce, backend.RejectAndTell}
			}
			p := PromptOf(tk)
			if p.Path != c.path || p.Command != c.cmd || p.Hunks != c.hunks {
				t.Errorf("%+v", p)
			}
			props := p.ResponseSchema()["properties"].(map[string]any)
			if _, ok := props["hunks"]; ok != c.schemaHasHunks {
				t.Errorf("schema hunks %v, want %v", ok, c.schemaHasHunks)
			}
			if props["subjectHash"].(map[string]any)["const"] != "sha256:x" {
				t.Errorf("the schema does not pin the hash")
			}
			if len(p.DecisionsOffered) == 0 || p.Message() == "" {
				t.Errorf("no decisions or no message: %+v", p)
			}
		})
	}
}
