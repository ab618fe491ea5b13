//go:build linux

package proc

import (
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestSupervisorProgram: after UseSupervisorProgram, the supervisor (the
// command's parent) is that program, not this binary, and it still starts
// once the file is removed from disk (an upgrade replacing it), as
// /proc/self/exe does.
func TestSupervisorProgram(t *testing.T) {
	self, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	copyPath := filepath.Join(t.TempDir(), "small-supervisor")
	copyFile(t, self, copyPath)
	parentExe := func() string {
		res, err := Output(t.Context(), Spec{Path: "/bin/sh", Dir: t.TempDir(), Env: []string{"PATH=/usr/bin:/bin"},
			Args: []string{"-c", `readlink /proc/$PPID/exe`}})
		if err != nil || res.ExitCode != 0 {
			t.Fatalf("Output = %+v, %v", res, err)
		}
		return strings.TrimSpace(string(res.Stdout))
	}
	if got := parentExe(); strings.Contains(got, "small-supervisor") {
		t.Fatalf("before UseSupervisorProgram the supervisor is %q", got)
	}
	if err := UseSupervisorProgram(copyPath); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(useSelfAsSupervisor)
	if got := parentExe(); got != copyPath {
		t.Fatalf("supervisor = %q, want %q", got, copyPath)
	}
	if err := os.Remove(copyPath); err != nil {
		t.Fatal(err)
	}
	if got := parentExe(); got != copyPath+" (deleted)" {
		t.Fatalf("after removal the supervisor = %q, want the removed program", got)
	}
	if err := UseSupervisorProgram(filepath.Join(t.TempDir(), "missing")); err == nil {
		t.Fatal("a missing program was accepted")
	}
}

func copyFile(t *testing.T, from, to string) {
	t.Helper()
	in, err := os.Open(from)
	if err != nil {
		t.Fatal(err)
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_WRONLY|os.O_EXCL, 0o755)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := io.Copy(out, in); err != nil {
		t.Fatal(err)
	}
	if err := out.Close(); err != nil {
		t.Fatal(err)
	}
}
