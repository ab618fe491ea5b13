//go:build linux

package workspace

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"
	"testing"
	"time"
)

// noHang runs fn and fails the test when it has not returned within a
// generous deadline. A FIFO blocks open(2) for reading until a writer
// appears, so on failure the FIFO is opened read-write to release fn.
func noHang(t *testing.T, fifo string, fn func() error) error {
	t.Helper()
	done := make(chan error, 1)
	go func() { done <- fn() }()
	select {
	case err := <-done:
		return err
	case <-time.After(20 * time.Second):
		if f, err := os.OpenFile(fifo, os.O_RDWR, 0); err == nil {
			f.Close()
		}
		<-done
		t.Fatal("the call blocked on a FIFO")
		return nil
	}
}

func mkfifo(t *testing.T, p string) {
	t.Helper()
	if err := syscall.Mkfifo(p, 0o644); err != nil {
		t.Fatal(err)
	}
}

// A cloned repository may ship (or a command may create) a FIFO where a file
// is expected: no read, stat or apply may block on it, and each refuses it
// as not a regular file.
func TestFIFONeverBlocks(t *testing.T) {
	f := newFixture(t)
	fifo := filepath.Join(f.root, "pipe")
	mkfifo(t, fifo)
	mkfifo(t, filepath.Join(f.root, "sub", "pipe2"))
	if err := os.Symlink("pipe", filepath.Join(f.root, "pipe_link")); err != nil {
		t.Fatal(err)
	}
	store, err := NewCheckpointStore(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	notRegular := func(t *testing.T, err error) {
		t.Helper()
		var pe *PathError
		if !errors.Is(err, fs.ErrInvalid) || !errors.As(err, &pe) {
			t.Fatalf("want a not-a-regular-file PathError, got %v", err)
		}
	}
	cases := []struct {
		name string
		call func() error
	}{
		{"ReadFile", func() error { _, err := f.fs.ReadFile("pipe"); return err }},
		{"ReadFile through an inner symlink", func() error { _, err := f.fs.ReadFile("pipe_link"); return err }},
		{"ReadFile nested", func() error { _, err := f.fs.ReadFile("sub/pipe2"); return err }},
		{"ReadDir", func() error { _, _, err := f.fs.ReadDir("pipe"); return err }},
		{"Apply overwrite", func() error {
			_, err := Apply(f.fs, []Change{{Path: "pipe", PreimageSHA256: Absent, NewContent: []byte("x")}}, store)
			return err
		}},
		{"Apply delete", func() error {
			_, err := Apply(f.fs, []Change{{Path: "sub/pipe2", PreimageSHA256: Hash(nil), Delete: true}}, store)
			return err
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := noHang(t, fifo, tc.call)
			if err == nil {
				t.Fatal("a FIFO was accepted")
			}
			if tc.name != "ReadDir" {
				notRegular(t, err)
			}
		})
	}
	for _, p := range []string{"pipe", "sub/pipe2"} {
		fi, err := os.Lstat(filepath.Join(f.root, p))
		if err != nil || fi.Mode()&fs.ModeNamedPipe == 0 {
			t.Fatalf("%s was replaced or removed: %v %v", p, fi, err)
		}
	}
}

// A device reached through a symlink (a repository shipping zero ->
// /dev/zero) is outside the workspace; one inside the workspace is not a
// regular file. Neither is read.
func TestDevicesRefused(t *testing.T) {
	f := newFixture(t)
	if err := os.Symlink("/dev/zero", filepath.Join(f.root, "zero")); err != nil {
		t.Fatal(err)
	}
	if _, err := f.fs.ReadFile("zero"); !errors.Is(err, ErrOutsideRoot) {
		t.Fatalf("symlink to /dev/zero: want ErrOutsideRoot, got %v", err)
	}
	// A device node inside the workspace needs CAP_MKNOD; where the test
	// may create one, it must be refused without reading.
	null := filepath.Join(f.root, "null")
	if err := syscall.Mknod(null, syscall.S_IFCHR|0o666, int(devNumber(1, 3))); err == nil {
		if _, err := f.fs.ReadFile("null"); !errors.Is(err, fs.ErrInvalid) {
			t.Fatalf("device node: want not a regular file, got %v", err)
		}
	} else if !errors.Is(err, syscall.EPERM) {
		t.Fatal(err)
	}
}

// devNumber is Linux's makedev for small major and minor numbers.
func devNumber(major, minor uint64) uint64 { return major<<8 | minor }
