package scrub

import (
	"os"
	"path/filepath"
	"testing"

	"agenthub/backend/redact"
)

func TestSession(t *testing.T) {
	real := t.TempDir()
	link := filepath.Join(t.TempDir(), "ws")
	if err := os.Symlink(real, link); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(t.TempDir(), "runtime")
	red := redact.NewFromEnviron([]string{"KEY=sk-secret-value-1234567890"}, "KEY")
	s := Session{Root: link, RealRoot: real, Dirs: []string{dir, ""}, Red: red}
	in := real + "/a.go " + link + "/b.go " + dir + "/raw sk-secret-value-1234567890"
	got := s.String(in)
	want := "./a.go ./b.go ./raw " + red.String("sk-secret-value-1234567890")
	if got != want {
		t.Errorf("String = %q, want %q", got, want)
	}
	if Paths(link, real+"/x") != "./x" {
		t.Errorf("Paths = %q", Paths(link, real+"/x"))
	}
	if (Session{Root: link}).String(link+"/c") != "./c" {
		t.Error("a session without a redactor")
	}
}

func TestClip(t *testing.T) {
	tests := []struct {
		in   string
		n    int
		want string
	}{
		{"short", 10, "short"},
		{"abcdef", 3, "abc…"},
		{"héllo", 2, "h…"}, // é is two bytes: never cut inside it
		{"one\ntwo", 10, "one\ntwo"},
	}
	for _, tc := range tests {
		if got := Clip(tc.in, tc.n); got != tc.want {
			t.Errorf("Clip(%q, %d) = %q, want %q", tc.in, tc.n, got, tc.want)
		}
	}
	if got := FirstLine("one\ntwo", 10); got != "one …" {
		t.Errorf("FirstLine = %q", got)
	}
	if got := LastLines("a\nb\nc\n\n", 2); got != "b\nc" {
		t.Errorf("LastLines = %q", got)
	}
	if Short("0123456789abcdef") != "0123456789ab" || Short("ab") != "ab" {
		t.Error("Short")
	}
}
