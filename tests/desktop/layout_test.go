//go:build smoke

package desktop

import (
	"debug/elf"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

// imported lists the shared libraries an ELF binary asks the loader for.
func imported(t *testing.T, path string) []string {
	t.Helper()
	f, err := elf.Open(path)
	if err != nil {
		t.Fatalf("open %s: %v", filepath.Base(path), err)
	}
	defer f.Close()
	libs, err := f.ImportedLibraries()
	if err != nil {
		t.Fatalf("read %s's libraries: %v", filepath.Base(path), err)
	}
	return libs
}

func anyHas(libs []string, part string) bool {
	for _, l := range libs {
		if strings.Contains(l, part) {
			return true
		}
	}
	return false
}

// TestOnlyTheWindowLinksGTK: the CLI binary (every command, the engine,
// the supervisors) asks the loader for neither GTK nor WebKitGTK; the window
// binary beside it does.
func TestOnlyTheWindowLinksGTK(t *testing.T) {
	cli := binary(t)
	window := filepath.Join(filepath.Dir(cli), "agenthub-window")
	cliLibs, windowLibs := imported(t, cli), imported(t, window)
	for _, part := range []string{"libgtk", "libwebkit2gtk", "libjavascriptcore", "libgdk"} {
		if anyHas(cliLibs, part) {
			t.Errorf("the CLI binary links %s: %v", part, cliLibs)
		}
	}
	for _, part := range []string{"libgtk-3", "libwebkit2gtk-4.1"} {
		if !anyHas(windowLibs, part) {
			t.Errorf("the window binary does not link %s: %v", part, windowLibs)
		}
	}
}

// TestCLIWithoutWindowBinary: the CLI binary copied alone, asked for the
// window with a display set, fails with window_unavailable and the next
// step, instead of a loader or Wails error.
func TestCLIWithoutWindowBinary(t *testing.T) {
	alone := filepath.Join(t.TempDir(), "agenthub")
	b, err := os.ReadFile(binary(t))
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(alone, b, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{nil, {"window"}} {
		cmd := exec.Command(alone, append(args, "--home", t.TempDir())...)
		cmd.Env = append(os.Environ(), "DISPLAY=:97")
		out, err := cmd.CombinedOutput()
		var ee *exec.ExitError
		if !errors.As(err, &ee) || ee.ExitCode() != 1 {
			t.Fatalf("agenthub %v: %v, want exit 1\n%s", args, err, out)
		}
		if !strings.Contains(string(out), "(window_unavailable)") || !strings.Contains(string(out), "next: ") ||
			!strings.Contains(string(out), "make build") {
			t.Errorf("agenthub %v printed:\n%s", args, out)
		}
	}
}
