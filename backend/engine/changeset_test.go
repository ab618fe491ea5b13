package engine

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"agenthub/backend"
	"agenthub/backend/llm"
	"agenthub/backend/llm/llmtest"
	"agenthub/backend/llm/openai"
	"agenthub/backend/store"
	"agenthub/backend/tools"
	"agenthub/workspace"
)

// changeWait bounds every wait here: the machine is shared and loaded.
const changeWait = 60 * time.Second

// TestChangeSetEventsAndComments (issue 18): a model on a loopback server
// proposes three writes in one step. Each proposal is run.patch.proposed
// with its approval id and pre-image hash, in the approval's commit; the
// reviewer comments on lines of the first, approves two and rejects the
// third (run.patch.rejected{reason:"reviewer"}); the comments reach the
// model in the next request, after that call's result, once; the audit
// names them and its chain verifies; the turn and the run each end with
// run.diff.ready counting the lines against the pre-images.
func TestChangeSetEventsAndComments(t *testing.T) {
	root := t.TempDir()
	if err := os.WriteFile(filepath.Join(root, "a.txt"), []byte("one\ntwo\nthree\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	write := func(id, path, content string) llmtest.Call {
		args, _ := json.Marshal(map[string]string{"path": path, "content": content})
		return llmtest.Call{ID: id, Name: tools.WriteFile, Args: []string{string(args)}}
	}
	srv := llmtest.NewOpenAI(llmtest.Turn{Calls: []llmtest.Call{write("c1", "a.txt", "one\nTWO\nthree\nfour\n"),
		write("c2", "b.txt", "bee\n"), write("c3", "c.txt", "sea\n")}}, llmtest.Turn{Text: []string{"done"}},
		llmtest.Turn{Text: []string{"noted"}})
	defer srv.Close()
	model := llm.AsModel(llm.NewFallback(openai.New(openai.Config{BaseURL: srv.URL + "/v1", HTTPClient: srv.Client()}),
		llm.Retry{Attempts: 1}), llm.ModelConfig{Model: "m"})
	ck := filepath.Join(t.TempDir(), "checkpoints")
	f := openFixture(t, filepath.Join(t.TempDir(), "a.db"), Config{GlobalLimit: 2, Default: "test",
		Tools:       tools.New(tools.Config{CheckpointDir: ck}),
		Profiles:    map[string]Profile{"test": {Runtime: "native", Model: model, Stop: DefaultStop}},
		Roots:       func(string) (string, error) { return root, nil },
		Checkpoints: ck})
	defer f.close(t)
	r, err := f.e.Start(t.Context(), StartRequest{WorkspaceID: "ws_1", Task: "edit three files"})
	if err != nil {
		t.Fatal(err)
	}

	decided := map[string]bool{}
	deadline := time.Now().Add(changeWait)
	for len(decided) < 3 {
		if time.Now().After(deadline) {
			t.Fatalf("decided %d of 3 approvals", len(decided))
		}
		aps, err := f.e.Approvals(t.Context(), r.ID)
		if err != nil {
			t.Fatal(err)
		}
		if len(aps) == 0 {
			time.Sleep(20 * time.Millisecond)
			continue
		}
		for _, ap := range aps {
			if decided[ap.ID] {
				continue
			}
			kind := backend.ApproveOnce
			switch {
			case strings.Contains(ap.Title, "a.txt"):
				addComment(t, f.st, r.ID, ap.ID, "a.txt", 2, 2, "use TWO in capitals")
				addComment(t, f.st, r.ID, ap.ID, "a.txt", 3, 4, "keep four")
			case strings.Contains(ap.Title, "c.txt"):
				kind = backend.RejectAndTell
			}
			if _, err := f.e.Decide(t.Context(), backend.Decision{DecisionID: "d_" + ap.ID, ApprovalID: ap.ID,
				Kind: kind, SubjectHash: ap.SubjectHash, Reason: "not this one", Actor: "me",
				Surface: backend.SurfaceCLI}); err != nil {
				t.Fatal(err)
			}
			decided[ap.ID] = true
		}
	}
	waitStateFor(t, f, r.ID, backend.RunCompleted)

	evs, err := f.e.Events(t.Context(), r.ID, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	requested := map[string]backend.ApprovalRequest{}
	var proposed []backend.PatchProposed
	var diffs []backend.DiffReady
	rejected := map[string]string{}
	for i, ev := range evs {
		switch ev.Type {
		case backend.EvApprovalRequested:
			var a backend.ApprovalRequest
			if err := json.Unmarshal(ev.Payload, &a); err != nil {
				t.Fatal(err)
			}
			requested[a.ToolCallID] = a
			if next := evs[i+1]; next.Type != backend.EvPatchProposed {
				t.Errorf("approval %s is followed by %s, want its run.patch.proposed", a.ID, next.Type)
			}
		case backend.EvPatchProposed:
			var p backend.PatchProposed
			if err := json.Unmarshal(ev.Payload, &p); err != nil {
				t.Fatal(err)
			}
			proposed = append(proposed, p)
		case backend.EvPatchRejected:
			var p struct{ ToolCallID, Reason string }
			_ = json.Unmarshal(ev.Payload, &p)
			rejected[p.ToolCallID] = p.Reason
		case backend.EvDiffReady:
			var d backend.DiffReady
			if err := json.Unmarshal(ev.Payload, &d); err != nil {
				t.Fatal(err)
			}
			diffs = append(diffs, d)
			if d.Scope == backend.DiffRun && !evs[i+1].Type.Terminal() {
				t.Errorf("the run's diff is followed by %s, want the terminal event", evs[i+1].Type)
			}
		}
	}
	if len(proposed) != 3 {
		t.Fatalf("%d run.patch.proposed, want 3: %+v", len(proposed), proposed)
	}
	pre := map[string]string{"a.txt": workspace.Hash([]byte("one\ntwo\nthree\n")), "b.txt": workspace.Absent,
		"c.txt": workspace.Absent}
	for _, p := range proposed {
		a, ok := requested[p.ToolCallID]
		if !ok || p.ApprovalID != a.ID || p.SubjectHash != a.SubjectHash || p.Resolver != "reviewer" {
			t.Errorf("proposal %+v does not name its approval %+v", p, a)
		}
		if len(p.Files) != 1 || p.Files[0].Preimage != pre[p.Files[0].Path] {
			t.Errorf("proposal files %+v, want one file with its pre-image", p.Files)
		}
	}
	if rejected["c3"] != "reviewer" || len(rejected) != 1 {
		t.Errorf("rejections %v, want c3 by the reviewer only", rejected)
	}
	if len(diffs) != 2 || diffs[0].Scope != backend.DiffTurn || diffs[0].Step != 1 || diffs[1].Scope != backend.DiffRun {
		t.Fatalf("diffs %+v, want one turn (step 1) and the run", diffs)
	}
	for _, d := range diffs {
		want := []backend.ChangedFile{
			{Path: "a.txt", Operation: "modify", Before: pre["a.txt"],
				After: workspace.Hash([]byte("one\nTWO\nthree\nfour\n")), Added: 2, Removed: 1},
			{Path: "b.txt", Operation: "create", Before: workspace.Absent, After: workspace.Hash([]byte("bee\n")),
				Added: 1},
		}
		if !slices.Equal(d.Files, want) || d.Summary != (backend.DiffSummary{Files: 2, Added: 3, Removed: 1}) ||
			len(d.Checkpoints) != 2 || d.Base != d.Checkpoints[0] || d.Target != "workspace" {
			t.Errorf("%s diff %+v, want files %+v", d.Scope, d, want)
		}
	}

	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	sent := string(reqs[1].Raw)
	for _, want := range []string{"Reviewer comments on this change:", "a.txt line 2: use TWO in capitals",
		"a.txt lines 3-4: keep four"} {
		if !strings.Contains(sent, want) {
			t.Errorf("the model was not sent %q:\n%s", want, sent)
		}
	}
	if n := strings.Count(sent, "Reviewer comments"); n != 1 {
		t.Errorf("the comments were sent %d times, want once (with the a.txt result)", n)
	}

	entries, err := f.st.AuditEntries(t.Context(), 0, 1000)
	if err != nil {
		t.Fatal(err)
	}
	var named []string
	for _, e := range entries {
		if e.Kind == "review.comments" {
			for _, id := range e.Data["commentIds"].([]any) {
				named = append(named, id.(string))
			}
		}
	}
	comments, err := f.st.RunComments(t.Context(), r.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(comments) != 2 || len(named) != 2 || named[0] != comments[0].ID || named[1] != comments[1].ID ||
		comments[0].DeliveredIn != "d_"+requested["c1"].ID {
		t.Errorf("audit names %v, comments %+v", named, comments)
	}

	// A comment on an applied change goes to the session's next run, in its
	// first message, once.
	var applied string
	for _, ev := range evs {
		if ev.Type == backend.EvPatchApplied && strings.Contains(string(ev.Payload), `"a.txt"`) {
			var p struct{ CheckpointID string }
			_ = json.Unmarshal(ev.Payload, &p)
			applied = p.CheckpointID
		}
	}
	if _, err := f.st.Do(t.Context(), func(tx *store.Tx) error {
		return tx.AddComment(backend.ReviewComment{ID: backend.NewID(backend.PrefixComment), RunID: r.ID,
			CheckpointID: applied, Path: "a.txt", StartLine: 4, EndLine: 4, Side: "new", Body: "four is one too many",
			Actor: "me", Surface: backend.SurfaceCLI, CreatedAt: backend.Stamp(time.Now())})
	}); err != nil {
		t.Fatal(err)
	}
	r2, err := f.e.Start(t.Context(), StartRequest{WorkspaceID: "ws_1", SessionID: r.SessionID, Task: "go on"})
	if err != nil {
		t.Fatal(err)
	}
	waitStateFor(t, f, r2.ID, backend.RunCompleted)
	reqs = srv.Requests()
	if len(reqs) != 3 {
		t.Fatalf("%d model requests, want 3", len(reqs))
	}
	for _, want := range []string{`go on\n\nReviewer comments on changes made earlier in this session:`,
		"a.txt line 4: four is one too many"} {
		if !strings.Contains(string(reqs[2].Raw), want) {
			t.Errorf("the next run's request lacks %q:\n%s", want, reqs[2].Raw)
		}
	}
	if n := strings.Count(string(reqs[2].Raw), "use TWO in capitals"); n != 1 {
		t.Errorf("a comment delivered with a decision is in the next run's request %d times, want once (its result)", n)
	}
	if comments, err = f.st.RunComments(t.Context(), r.ID); err != nil || comments[2].DeliveredIn != r2.ID {
		t.Errorf("the applied change's comment: %+v, %v, want delivered with %s", comments, err, r2.ID)
	}
	if broken, _, err := f.st.VerifyAudit(t.Context()); err != nil || broken != 0 {
		t.Errorf("audit chain: broken at %d, %v", broken, err)
	}
}

func addComment(t *testing.T, st *store.Store, runID, approvalID, path string, from, to int, body string) {
	t.Helper()
	_, err := st.Do(t.Context(), func(tx *store.Tx) error {
		return tx.AddComment(backend.ReviewComment{ID: backend.NewID(backend.PrefixComment), RunID: runID,
			ApprovalID: approvalID, Path: path, StartLine: from, EndLine: to, Side: "new", Body: body,
			Actor: "me", Surface: backend.SurfaceCLI, CreatedAt: backend.Stamp(time.Now())})
	})
	if err != nil {
		t.Fatal(err)
	}
}

func waitStateFor(t *testing.T, f *fixture, runID string, want backend.RunState) {
	t.Helper()
	deadline := time.Now().Add(changeWait)
	for {
		r, err := f.e.Run(t.Context(), runID)
		if err != nil {
			t.Fatal(err)
		}
		if r.State == want {
			return
		}
		if r.State.Terminal() || time.Now().After(deadline) {
			t.Fatalf("run %s is %s, want %s", runID, r.State, want)
		}
		time.Sleep(20 * time.Millisecond)
	}
}
