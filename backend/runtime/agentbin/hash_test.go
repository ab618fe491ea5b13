package agentbin

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"agenthub/backend/store"
)

func sumOf(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// forget empties this process's memory of hashes, as a new process starts.
func forget() {
	hashes.Lock()
	hashes.m = map[store.FileStamp]string{}
	hashes.Unlock()
}

func openStore(t *testing.T) *store.Store {
	t.Helper()
	st, err := store.Open(t.Context(), filepath.Join(t.TempDir(), "agenthub.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return st
}

func openStoreB(b *testing.B) (*store.Store, error) {
	st, err := store.Open(b.Context(), filepath.Join(b.TempDir(), "agenthub.db"))
	if err == nil {
		b.Cleanup(func() { st.Close() })
	}
	return st, err
}

func statOf(t *testing.T, path string) store.FileStamp {
	t.Helper()
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	s, err := stampOf(f, path)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// waitNewCtime waits until a file created now gets a status-change time
// after old's: the kernel's file clock is coarse (a tick of a few ms), and a
// rewrite in the same tick as the first hash would keep the ctime.
func waitNewCtime(t *testing.T, old store.FileStamp) {
	t.Helper()
	probe := filepath.Join(t.TempDir(), "probe")
	deadline := time.Now().Add(30 * time.Second)
	for {
		if err := os.WriteFile(probe, nil, 0o600); err != nil {
			t.Fatal(err)
		}
		if statOf(t, probe).CTime > old.CTime {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the file clock did not advance in 30 s")
		}
	}
}

// TestHashCacheAcrossProcesses: a hash recorded in the database is reused
// by a later process (no re-read: a planted wrong value comes back), and
// every way of changing the file hashes it again, including a replacement
// and an in-place rewrite that keep the size and the modification time.
func TestHashCacheAcrossProcesses(t *testing.T) {
	st := openStore(t)
	release := UseCache(st)
	defer release()
	dir := t.TempDir()
	bin := filepath.Join(dir, "claude")
	one := []byte("#!/bin/sh\necho one\n")
	if err := os.WriteFile(bin, one, 0o755); err != nil {
		t.Fatal(err)
	}
	forget()
	if got, err := Hash(bin); err != nil || got != sumOf(one) {
		t.Fatalf("first Hash = %q, %v", got, err)
	}
	stamp := statOf(t, bin)
	if got, err := st.ProgramHash(t.Context(), stamp); err != nil || got != sumOf(one) {
		t.Fatalf("recorded hash = %q, %v", got, err)
	}
	// A new process finds the record: plant a value no file hashes to and
	// see it come back, which proves the file was not read again.
	planted := strings.Repeat("ab", 32)
	if err := st.RememberProgramHash(t.Context(), stamp, planted); err != nil {
		t.Fatal(err)
	}
	forget()
	if got, err := Hash(bin); err != nil || got != planted {
		t.Fatalf("Hash in a new process = %q, %v; want the recorded value", got, err)
	}

	cases := []struct {
		name   string
		change func(t *testing.T, content []byte)
	}{
		{"rewritten with a new mtime", func(t *testing.T, content []byte) {
			if err := os.WriteFile(bin, content, 0o755); err != nil {
				t.Fatal(err)
			}
		}},
		{"replaced by rename, same size and mtime", func(t *testing.T, content []byte) {
			old := statOf(t, bin)
			tmp := filepath.Join(dir, "claude.new")
			if err := os.WriteFile(tmp, content, 0o755); err != nil {
				t.Fatal(err)
			}
			mtime := time.Unix(0, old.MTime)
			if err := os.Chtimes(tmp, mtime, mtime); err != nil {
				t.Fatal(err)
			}
			if err := os.Rename(tmp, bin); err != nil {
				t.Fatal(err)
			}
			if now := statOf(t, bin); now.Size != old.Size || now.MTime != old.MTime || now.Inode == old.Inode {
				t.Fatalf("the replacement is not the attack: %+v after %+v", now, old)
			}
		}},
		{"rewritten in place, same size and mtime", func(t *testing.T, content []byte) {
			old := statOf(t, bin)
			f, err := os.OpenFile(bin, os.O_WRONLY, 0)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := f.WriteAt(content, 0); err != nil {
				t.Fatal(err)
			}
			if err := f.Close(); err != nil {
				t.Fatal(err)
			}
			mtime := time.Unix(0, old.MTime)
			if err := os.Chtimes(bin, mtime, mtime); err != nil {
				t.Fatal(err)
			}
			if now := statOf(t, bin); now.Size != old.Size || now.MTime != old.MTime || now.Inode != old.Inode {
				t.Fatalf("the rewrite is not the attack: %+v after %+v", now, old)
			}
		}},
	}
	for i, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			// Hash the current file honestly first, so the record is right
			// for it; then change it.
			cur, err := os.ReadFile(bin)
			if err != nil {
				t.Fatal(err)
			}
			forget()
			if err := st.RememberProgramHash(t.Context(), statOf(t, bin), sumOf(cur)); err != nil {
				t.Fatal(err)
			}
			waitNewCtime(t, statOf(t, bin))
			next := []byte("#!/bin/sh\necho " + string(rune('A'+i)) + "X\n")
			next = append(next, make([]byte, len(cur)-len(next))...) // the same size
			c.change(t, next)
			forget()
			if got, err := Hash(bin); err != nil || got != sumOf(next) {
				t.Fatalf("Hash after the change = %q, %v; want %s (the old record said %s)", got, err, sumOf(next), sumOf(cur))
			}
			if got, err := st.ProgramHash(t.Context(), statOf(t, bin)); err != nil || got != sumOf(next) {
				t.Fatalf("record after the change = %q, %v", got, err)
			}
		})
	}
}

// TestHashPersistsNoPath: the database names a program by a hash of its
// path, never the path itself.
func TestHashPersistsNoPath(t *testing.T) {
	dbPath := filepath.Join(t.TempDir(), "agenthub.db")
	st, err := store.Open(t.Context(), dbPath)
	if err != nil {
		t.Fatal(err)
	}
	release := UseCache(st)
	bin := filepath.Join(t.TempDir(), "codex-program-name-marker")
	if err := os.WriteFile(bin, []byte("#!/bin/sh\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	forget()
	if _, err := Hash(bin); err != nil {
		t.Fatal(err)
	}
	release()
	if err := st.Close(); err != nil {
		t.Fatal(err)
	}
	for _, suffix := range []string{"", "-wal"} {
		b, err := os.ReadFile(dbPath + suffix)
		if err != nil && !os.IsNotExist(err) {
			t.Fatal(err)
		}
		if strings.Contains(string(b), "codex-program-name-marker") {
			t.Fatalf("%s holds the program's path", filepath.Base(dbPath+suffix))
		}
	}
}
