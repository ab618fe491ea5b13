package rawlog

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestLogKeepsLinesAndMarksCuts(t *testing.T) {
	dir := t.TempDir()
	l, err := Open(dir, "s1")
	if err != nil {
		t.Fatal(err)
	}
	l.Write([]byte(`{"a":1}`), false)
	l.Write([]byte(`{"b":`), true)
	l.Close()
	l.Write([]byte(`after close`), false) // dropped
	b, err := os.ReadFile(filepath.Join(dir, "s1.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	want := "{\"a\":1}\n{\"b\":…\n{\"type\":\"agenthub_line_cut\"}\n"
	if string(b) != want {
		t.Fatalf("raw log:\n%q\nwant\n%q", b, want)
	}
	if Name("s1") != "raw/s1.jsonl" {
		t.Fatal(Name("s1"))
	}
}

func TestLogStopsAtItsCap(t *testing.T) {
	l, err := Open(t.TempDir(), "s2")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	line := []byte(strings.Repeat("x", 1<<20))
	for range maxRaw>>20 + 2 {
		l.Write(line, false)
	}
	if !l.full || l.written > maxRaw {
		t.Fatalf("full %v, written %d of %d", l.full, l.written, maxRaw)
	}
}
