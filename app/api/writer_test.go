package api

import (
	"errors"
	"path/filepath"
	"testing"

	"agenthub/backend"
)

// TestSecondProcessOnlyReads: while one core runs a run, a second core on
// the same data directory (a CLI command beside the window) must not
// recover it (that marked the live run interrupted, and the owner's next
// event then collided with the second one's) nor change runs; it reads,
// and once the first is closed the next core is the writer again.
func TestSecondProcessOnlyReads(t *testing.T) {
	home, dir := t.TempDir(), t.TempDir()
	owner, err := Open(t.Context(), Config{Home: home, Version: "test", Surface: backend.SurfaceWindow})
	if err != nil {
		t.Fatal(err)
	}
	defer owner.Close()
	ws, err := NewWorkspacesAPI(owner).Add(dir)
	if err != nil {
		t.Fatal(err)
	}
	profile, err := owner.AddPlaybook([]byte(sleeperPlaybook))
	if err != nil {
		t.Fatal(err)
	}
	run, err := NewRunsAPI(owner).Start(StartRun{WorkspaceID: ws.ID, Profile: profile, Task: "sleep"})
	if err != nil {
		t.Fatal(err)
	}
	a := waitApproval(t, NewApprovalsAPI(owner), run.ID)
	if _, err := NewApprovalsAPI(owner).Decide(backend.Decision{ApprovalID: a.ID, ToolCallID: a.ToolCallID,
		Kind: backend.ApproveOnce, SubjectHash: a.SubjectHash}); err != nil {
		t.Fatal(err)
	}
	waitPID(t, filepath.Join(dir, "sleeper.pid")) // the run is Applying in the owner

	reader, err := Open(t.Context(), Config{Home: home, Version: "test", Surface: backend.SurfaceCLI})
	if err != nil {
		t.Fatal(err)
	}
	got, err := NewRunsAPI(reader).Get(run.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.State.Terminal() {
		t.Fatalf("opening a second core ended the owner's live run: %s", got.State)
	}
	calls := map[string]func() error{
		"start": func() error {
			_, err := NewRunsAPI(reader).Start(StartRun{WorkspaceID: ws.ID, Profile: profile, Task: "x"})
			return err
		},
		"cancel": func() error { _, err := NewRunsAPI(reader).Cancel(run.ID); return err },
		"resume": func() error { _, err := NewRunsAPI(reader).Resume(run.ID); return err },
		"decide": func() error {
			_, err := NewApprovalsAPI(reader).Decide(backend.Decision{ApprovalID: a.ID, Kind: backend.ApproveOnce})
			return err
		},
	}
	for name, call := range calls {
		var be *backend.Error
		if err := call(); !errors.As(err, &be) || be.Code != backend.CodeConflict || be.Next == "" {
			t.Errorf("%s from the second core: %v, want %s with a next step", name, err, backend.CodeConflict)
		}
	}
	if err := reader.Close(); err != nil {
		t.Fatal(err)
	}
	if r, err := NewRunsAPI(owner).Cancel(run.ID); err != nil || r.State != backend.RunCancelled {
		t.Fatalf("the owner's cancel after the reader closed: %v %v", r.State, err)
	}
	if err := owner.Close(); err != nil {
		t.Fatal(err)
	}
	next, err := Open(t.Context(), Config{Home: home, Version: "test", Surface: backend.SurfaceCLI})
	if err != nil {
		t.Fatal(err)
	}
	defer next.Close()
	if err := next.writable(); err != nil {
		t.Fatalf("the next core after the owner closed is not the writer: %v", err)
	}
}
