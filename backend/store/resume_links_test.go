package store

import (
	"context"
	"errors"
	"io/fs"
	"path/filepath"
	"strings"
	"testing"
	"testing/fstest"

	"agenthub/backend"
)

// TestResumeLinksMigrationAndOnce: migration 00008 links continuations
// written before it from their run.created events, the first one only when
// a run was resumed twice; after it, a second continuation of a run is
// refused with run_already_resumed naming the first, and both links read
// back.
func TestResumeLinksMigrationAndOnce(t *testing.T) {
	path := filepath.Join(t.TempDir(), "agenthub.db")
	old := fstest.MapFS{}
	err := fs.WalkDir(Migrations(), ".", func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || p >= "00008" {
			return err
		}
		b, err := fs.ReadFile(Migrations(), p)
		old[p] = &fstest.MapFile{Data: b}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	s, err := open(t.Context(), path, old)
	if err != nil {
		t.Fatal(err)
	}
	ctx := t.Context()
	if err := s.AddWorkspace(ctx, backend.Workspace{ID: "ws_1", Name: "w", Path: "/abs/w", DisplayPath: "~/w"},
		By{Actor: "t", Surface: backend.SurfaceCLI}); err != nil {
		t.Fatal(err)
	}
	create := func(s *Store, id, from string, rec bool) error {
		_, err := s.Do(ctx, func(tx *Tx) error {
			if err := tx.CreateSession("ses_"+id, "ws_1", ""); err != nil {
				return err
			}
			created := map[string]any{"task": "t"}
			r := RunRecord{ID: id, SessionID: "ses_" + id, WorkspaceID: "ws_1", Profile: "demo", AgentID: "a",
				Runtime: "script", Task: "t"}
			if from != "" {
				created["resumedFrom"] = from
				if rec {
					r.ResumedFrom = from
				}
			}
			_, err := tx.CreateRun(r, created)
			return err
		})
		return err
	}
	// Before 00008: run_a was resumed twice (run_b, then run_c).
	for _, r := range [][2]string{{"run_a", ""}, {"run_b", "run_a"}, {"run_c", "run_a"}, {"run_d", ""}} {
		if err := create(s, r[0], r[1], false); err != nil {
			t.Fatal(err)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	s, err = Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	want := map[string][2]string{"run_a": {"", "run_b"}, "run_b": {"run_a", ""}, "run_c": {"", ""}, "run_d": {"", ""}}
	for id, w := range want {
		r, err := s.Run(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		if r.ResumedFrom != w[0] || r.ResumedBy != w[1] {
			t.Errorf("%s after the migration: from %q by %q, want from %q by %q", id, r.ResumedFrom, r.ResumedBy, w[0], w[1])
		}
	}
	// After it: run_d resumes once; a second continuation is refused.
	if err := create(s, "run_e", "run_d", true); err != nil {
		t.Fatal(err)
	}
	err = create(s, "run_f", "run_d", true)
	var be *backend.Error
	if !errors.As(err, &be) || be.Code != backend.CodeRunAlreadyResumed || !strings.Contains(be.Message, "run_e") {
		t.Fatalf("second resume of run_d: %v, want run_already_resumed naming run_e", err)
	}
	if _, err := s.Run(ctx, "run_f"); err == nil {
		t.Fatal("the refused continuation was stored")
	}
	d, _ := s.Run(ctx, "run_d")
	e, _ := s.Run(ctx, "run_e")
	if d.ResumedBy != "run_e" || e.ResumedFrom != "run_d" || d.Summary().ResumedBy != "run_e" {
		t.Fatalf("links: run_d by %q, run_e from %q", d.ResumedBy, e.ResumedFrom)
	}
}
