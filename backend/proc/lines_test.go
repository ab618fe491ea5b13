package proc

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

type seen struct {
	Line      string
	Truncated bool
}

func collect(max int, writes ...string) []seen {
	var got []seen
	lw := newLineWriter(func(b []byte, cut bool) { got = append(got, seen{string(b), cut}) }, max)
	for _, w := range writes {
		_, _ = lw.Write([]byte(w))
	}
	lw.flush()
	return got
}

func TestLineWriterFraming(t *testing.T) {
	tests := []struct {
		name   string
		max    int
		writes []string
		want   []seen
	}{
		{"split across writes", 0, []string{`{"a":`, "1}\n{\"b\"", ":2}\n"}, []seen{{`{"a":1}`, false}, {`{"b":2}`, false}}},
		{"crlf and empty lines", 0, []string{"x\r\n\ny\n"}, []seen{{"x", false}, {"", false}, {"y", false}}},
		{"last line without break", 0, []string{"a\nb"}, []seen{{"a", false}, {"b", false}}},
		{"over-long line is cut once", 4, []string{"abcdefgh", "ij\nok\n"}, []seen{{"abcd", true}, {"ok", false}}},
		{"exactly max fits", 4, []string{"abcd\n"}, []seen{{"abcd", false}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if diff := cmp.Diff(tt.want, collect(tt.max, tt.writes...)); diff != "" {
				t.Errorf("lines (-want +got):\n%s", diff)
			}
		})
	}
}

// TestStreamingChild: a child reads its input line by line and answers each
// on standard output; the caller sees every answer while the child runs,
// including one far longer than bufio's default buffer, and the child ends
// when its input is closed.
func TestStreamingChild(t *testing.T) {
	var mu sync.Mutex
	var lines []string
	got := make(chan string, 16)
	p, err := Start(t.Context(), Spec{Path: "/bin/sh", Args: []string{"-c",
		`while read -r l; do echo "got $l"; done; head -c 200000 /dev/zero | tr '\0' x; echo; echo bye`},
		Stdin: true, Lines: func(b []byte, cut bool) {
			mu.Lock()
			lines = append(lines, string(b))
			mu.Unlock()
			got <- string(b)
		}})
	if err != nil {
		t.Fatal(err)
	}
	for i := range 3 {
		if _, err := fmt.Fprintf(p.Stdin(), "m%d\n", i); err != nil {
			t.Fatal(err)
		}
		select {
		case l := <-got:
			if l != fmt.Sprintf("got m%d", i) {
				t.Fatalf("line %d = %q", i, l)
			}
		case <-time.After(10 * time.Second):
			t.Fatal("no answer while the child runs")
		}
	}
	if err := p.Stdin().Close(); err != nil {
		t.Fatal(err)
	}
	res, err := p.Wait()
	if err != nil || res.ExitCode != 0 || len(res.Stdout) != 0 {
		t.Fatalf("Wait = %d %q, %v", res.ExitCode, res.Stdout, err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(lines) != 5 || len(lines[3]) != 200000 || lines[4] != "bye" {
		t.Fatalf("lines: %d, long %d", len(lines), len(lines[3]))
	}
	if p.Pid() <= 0 {
		t.Fatal("no pid")
	}
}
