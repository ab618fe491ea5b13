package store

import (
	"errors"
	"testing"

	"github.com/google/go-cmp/cmp"

	"agenthub/backend"
)

func TestWorkspaces(t *testing.T) {
	s, _ := openTest(t)
	ctx := t.Context()
	by := By{Actor: "alice", Surface: backend.SurfaceCLI}
	a := backend.Workspace{ID: "ws_a", Name: "a", Path: "/abs/a", DisplayPath: "~/a", AddedAt: "2026-01-01T00:00:00.000Z"}
	b := backend.Workspace{ID: "ws_b", Name: "b", Path: "/abs/b", DisplayPath: "~/b", AddedAt: "2025-01-01T00:00:00.000Z"}
	for _, w := range []backend.Workspace{a, b} {
		if err := s.AddWorkspace(ctx, w, by); err != nil {
			t.Fatal(err)
		}
	}
	got, err := s.Workspaces(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]backend.Workspace{b, a}, got); diff != "" {
		t.Errorf("ordered by AddedAt (-want +got):\n%s", diff)
	}
	if err := s.RemoveWorkspace(ctx, "ws_b", by); err != nil {
		t.Fatal(err)
	}
	if err := s.RemoveWorkspace(ctx, "ws_b", by); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("second remove: %v, want ErrNotFound", err)
	}
	if err := s.RemoveWorkspace(ctx, "nope", by); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("unknown remove: %v, want ErrNotFound", err)
	}
	if _, err := s.Workspace(ctx, "ws_b"); !errors.Is(err, backend.ErrNotFound) {
		t.Errorf("removed workspace still readable: %v", err)
	}
	// The same path may be added again once removed.
	b.ID = "ws_b2"
	if err := s.AddWorkspace(ctx, b, by); err != nil {
		t.Fatalf("re-add removed path: %v", err)
	}
	ents, err := s.AuditEntries(ctx, 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	for _, e := range ents {
		kinds = append(kinds, e.Kind+":"+e.Data["workspaceId"].(string)+":"+e.Actor+":"+string(e.Surface))
	}
	want := []string{"workspace.added:ws_a:alice:cli", "workspace.added:ws_b:alice:cli",
		"workspace.removed:ws_b:alice:cli", "workspace.added:ws_b2:alice:cli"}
	if diff := cmp.Diff(want, kinds); diff != "" {
		t.Errorf("audit entries (-want +got):\n%s", diff)
	}
	for _, e := range ents {
		if _, ok := e.Data["path"]; ok {
			t.Errorf("audit entry %d carries the absolute path", e.Seq)
		}
	}
}

func TestAddWorkspaceFailureWritesNoAudit(t *testing.T) {
	s, _ := openTest(t)
	ctx := t.Context()
	w := backend.Workspace{ID: "ws_a", Name: "a", Path: "/abs/a", DisplayPath: "~/a"}
	by := By{Actor: "me", Surface: backend.SurfaceWindow}
	if err := s.AddWorkspace(ctx, w, by); err != nil {
		t.Fatal(err)
	}
	if err := s.AddWorkspace(ctx, w, by); err == nil {
		t.Fatal("duplicate id accepted")
	}
	ents, _ := s.AuditEntries(ctx, 0, 0)
	if len(ents) != 1 {
		t.Errorf("audit has %d entries after a failed add, want 1 (same transaction)", len(ents))
	}
}

func TestSettings(t *testing.T) {
	s, _ := openTest(t)
	ctx := t.Context()
	if _, ok, err := s.Setting(ctx, "theme"); ok || err != nil {
		t.Fatalf("unset: ok=%v err=%v", ok, err)
	}
	for _, v := range []string{"dark", "light"} {
		if err := s.SetSetting(ctx, "theme", v); err != nil {
			t.Fatal(err)
		}
		got, ok, err := s.Setting(ctx, "theme")
		if err != nil || !ok || got != v {
			t.Errorf("Setting = %q %v %v, want %q", got, ok, err, v)
		}
	}
}
