//go:build linux

package store

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"

	"agenthub/backend"
)

// smallFS mounts a tmpfs of size on a temp dir (root only).
func smallFS(t *testing.T, size string) string {
	t.Helper()
	if os.Geteuid() != 0 {
		t.Skip("mounting a tmpfs needs root")
	}
	dir := t.TempDir()
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Skipf("cannot mount a tmpfs here: %v", err)
	}
	t.Cleanup(func() {
		if err := syscall.Unmount(dir, syscall.MNT_DETACH); err != nil {
			t.Errorf("unmount: %v", err)
		}
	})
	return dir
}

func fill(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	chunk := make([]byte, 64<<10)
	for {
		if _, err := f.Write(chunk); err != nil {
			if !errors.Is(err, syscall.ENOSPC) {
				t.Fatalf("fill: %v", err)
			}
			return
		}
	}
}

// TestDiskFullIsStorageFull: a full disk at start and during writes is
// storage_full saying where the space went, with the cause in the chain.
func TestDiskFullIsStorageFull(t *testing.T) {
	dir := smallFS(t, "2m")
	path := filepath.Join(dir, "agenthub.db")
	fill(t, filepath.Join(dir, "filler"))
	_, err := Open(t.Context(), path)
	be := wantCode(t, err, backend.CodeStorageFull, "agenthub.db is", "Free space")
	if !strings.Contains(err.Error(), "full") {
		t.Errorf("the cause is not in the error chain: %v", be)
	}
	// Room to start, then the disk fills during writes.
	if err := os.Remove(filepath.Join(dir, "filler")); err != nil {
		t.Fatal(err)
	}
	os.Remove(path)
	os.Remove(path + "-wal")
	os.Remove(path + "-shm")
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	fill(t, filepath.Join(dir, "filler"))
	var last error
	for i := range 2000 {
		if _, last = s.AppendAudit(t.Context(), backend.AuditEntry{Actor: "me", Surface: backend.SurfaceCLI,
			Kind: "x", Data: map[string]any{"pad": strings.Repeat("y", 4000), "i": i}}); last != nil {
			break
		}
	}
	wantCode(t, last, backend.CodeStorageFull, "MB")
}

// TestReadOnlyIsStorageReadOnly: a database on a filesystem remounted
// read-only is storage_read_only (chmod does not stop root, a read-only
// mount does).
func TestReadOnlyIsStorageReadOnly(t *testing.T) {
	dir := smallFS(t, "8m")
	path := filepath.Join(dir, "agenthub.db")
	s, err := Open(t.Context(), path)
	if err != nil {
		t.Fatal(err)
	}
	newRun(t, s, "run_1")
	s.Close()
	if err := syscall.Mount("", dir, "", syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
		t.Fatalf("remount read-only: %v", err)
	}
	_, err = Open(t.Context(), path)
	wantCode(t, err, backend.CodeStorageReadOnly, "read-only", "writable")
}
