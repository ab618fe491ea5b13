// Package protocoltest holds what the translators' tests share: the
// recorded run they replay and the golden-file comparison. It does not
// import testing (non-test code never does): TB is the part of testing.TB
// it uses.
package protocoltest

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"

	"agenthub/backend"
)

// TB is the part of testing.TB the helpers use.
type TB interface {
	Helper()
	Fatal(args ...any)
	Errorf(format string, args ...any)
}

// Recorded is a real run of tests/protocols/agui's playbook (a write of two
// hunks, approved in part; a command, rejected; done) as the store keeps
// it, read from app/protocol/testdata by a test of a package beside it.
func Recorded(t TB) []backend.Event {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "testdata", "run.json"))
	if err != nil {
		t.Fatal(err)
	}
	var evs []backend.Event
	if err := json.Unmarshal(data, &evs); err != nil {
		t.Fatal(err)
	}
	return evs
}

// Golden compares got, as indented JSON, with testdata/<name>; update
// rewrites the file first.
func Golden(t TB, name string, got any, update bool) {
	t.Helper()
	data, err := json.MarshalIndent(got, "", " ")
	if err != nil {
		t.Fatal(err)
	}
	path := filepath.Join("testdata", name)
	if update {
		if err := os.WriteFile(path, append(data, '\n'), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(bytes.TrimSpace(want), bytes.TrimSpace(data)) {
		t.Errorf("the output differs from %s (go test -update to accept it)", path)
	}
}
