package proc

import (
	"bufio"
	"io"
	"testing"
)

// TestStdoutPipeEcho speaks line by line with a child over stdin and a
// stdout stream, then sees EOF after the child's last line once it exits.
func TestStdoutPipeEcho(t *testing.T) {
	p, err := Start(t.Context(), Spec{Path: "/bin/sh", Args: []string{"-c", `while read l; do echo "got $l"; done; echo bye`},
		Stdin: true, StdoutPipe: true})
	if err != nil {
		t.Fatal(err)
	}
	r := bufio.NewReader(p.Stdout())
	for _, w := range []string{"a", "b"} {
		if _, err := io.WriteString(p.Stdin(), w+"\n"); err != nil {
			t.Fatal(err)
		}
		line, err := r.ReadString('\n')
		if err != nil || line != "got "+w+"\n" {
			t.Fatalf("line %q, %v", line, err)
		}
	}
	_ = p.Stdin().Close()
	rest, err := io.ReadAll(r)
	if err != nil || string(rest) != "bye\n" {
		t.Fatalf("rest %q, %v", rest, err)
	}
	if res, err := p.Wait(); err != nil || res.ExitCode != 0 || len(res.Stdout) != 0 {
		t.Fatalf("Wait: %+v %v", res, err)
	}
}

// TestStdoutPipeClosedEarly: a caller that stops reading does not hang the
// child's Wait, and that is not an error.
func TestStdoutPipeClosedEarly(t *testing.T) {
	p, err := Start(t.Context(), Spec{Path: "/bin/sh", Args: []string{"-c", `yes | head -c 1000000`}, StdoutPipe: true})
	if err != nil {
		t.Fatal(err)
	}
	buf := make([]byte, 10)
	if _, err := io.ReadFull(p.Stdout(), buf); err != nil {
		t.Fatal(err)
	}
	_ = p.Stdout().Close()
	if _, err := p.Wait(); err != nil {
		t.Fatalf("Wait: %v", err)
	}
}
