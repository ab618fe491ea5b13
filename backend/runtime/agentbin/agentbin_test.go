package agentbin

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agenthub/backend"
)

var cli = CLI{Label: "The Tool", Name: "tool", Hint: "npm install tool@1.2.3"}

// script writes a shell script standing in for the CLI.
func script(t *testing.T, body string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "tool")
	if err := os.WriteFile(p, []byte("#!/bin/sh\n"+body+"\n"), 0o755); err != nil {
		t.Fatal(err)
	}
	return p
}

func TestFind(t *testing.T) {
	bin := script(t, "exit 0")
	if got, err := cli.Find(bin, ""); err != nil || got != bin {
		t.Fatalf("Find(absolute) = %q, %v", got, err)
	}
	if got, err := cli.Find("tool", filepath.Dir(bin)); err != nil || got != bin {
		t.Fatalf("Find(name on path) = %q, %v", got, err)
	}
	for _, cmd := range []string{filepath.Join(t.TempDir(), "tool"), "agenthub-no-such-tool", ""} {
		_, err := cli.Find(cmd, t.TempDir())
		var be *backend.Error
		if !errors.As(err, &be) || be.Code != backend.FailRuntimeUnavailable || be.Next != "Install it with: "+cli.Hint ||
			strings.Contains(be.Message, cli.Hint) || strings.Contains(err.Error(), os.TempDir()) {
			t.Errorf("Find(%q) = %v", cmd, err)
		}
	}
}

func TestVersion(t *testing.T) {
	v, err := cli.Version(t.Context(), script(t, `echo "tool 2.0.1 (build 7)"`), t.TempDir(), nil)
	if err != nil || v != "2.0.1" {
		t.Fatalf("Version = %q, %v", v, err)
	}
	for _, body := range []string{`echo "no version here"`, `echo 1.2.3; exit 1`} {
		if _, err := cli.Version(t.Context(), script(t, body), t.TempDir(), nil); backend.CodeOf(err) != backend.FailRuntimeUnavailable {
			t.Errorf("%s: %v", body, err)
		}
	}
}

func TestHash(t *testing.T) {
	bin := script(t, "exit 0")
	link := filepath.Join(t.TempDir(), "link")
	if err := os.Symlink(bin, link); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(bin)
	sum := sha256.Sum256(b)
	for _, p := range []string{bin, link, bin} { // the third is cached
		if got, err := Hash(p); err != nil || got != hex.EncodeToString(sum[:]) {
			t.Fatalf("Hash(%s) = %q, %v", p, got, err)
		}
	}
}

func TestDriftWarning(t *testing.T) {
	if w := DriftWarning("Tool", "1.2.3", "1.2.3", cli.Hint); w != "" {
		t.Errorf("same version: %q", w)
	}
	if w := DriftWarning("Tool", "2.0.0", "1.2.3", cli.Hint); !strings.Contains(w, "this is Tool 2.0.0") ||
		!strings.Contains(w, cli.Hint) {
		t.Errorf("drift: %q", w)
	}
	if w := DriftWarning("Tool", "2.0.0", "", cli.Hint); !strings.Contains(w, "not tested with Tool 2.0.0") {
		t.Errorf("untested: %q", w)
	}
	if !(Info{Version: "2", Tested: "1"}).Drift() || (Info{Version: "1", Tested: "1"}).Drift() {
		t.Error("Drift")
	}
}
