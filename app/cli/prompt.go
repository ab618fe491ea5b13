package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"agenthub/backend"
)

// prompter asks the user on the terminal. Only a line typed by the user
// decides: end of input leaves the approval pending.
type prompter struct {
	in  *bufio.Reader
	out io.Writer
	err io.Writer

	// lines is fed by one reader goroutine, started at the first prompt, so
	// that Ctrl-C (the end of ask's ctx) ends a prompt blocked on input.
	once  sync.Once
	lines chan promptLine
}

type promptLine struct {
	text string
	err  error
}

// readLine waits for the next line of input or the end of ctx.
func (p *prompter) readLine(ctx context.Context) (string, error) {
	p.once.Do(func() {
		p.lines = make(chan promptLine)
		go func() {
			for {
				line, err := p.in.ReadString('\n')
				p.lines <- promptLine{line, err}
				if err != nil {
					return
				}
			}
		}()
	})
	select {
	case <-ctx.Done():
		return "", ctx.Err()
	case l := <-p.lines:
		return l.text, l.err
	}
}

// ask shows one approval and reads the decision; an empty kind means
// "leave it pending".
func (p *prompter) ask(ctx context.Context, a backend.ApprovalRequest) (backend.DecisionKind, string, error) {
	fmt.Fprintf(p.out, "\n=== Approval %s: %s ===\n", a.ID, a.Title)
	fmt.Fprintf(p.out, "kind %s, risk %s\n%s\n", a.Kind, a.Risk, preview(a.Preview))
	for {
		if err := ctx.Err(); err != nil {
			return "", "", err
		}
		fmt.Fprint(p.out, "[a]pprove once, [r]eject and tell the agent, [s]top the run, [l]eave pending: ")
		line, err := p.readLine(ctx)
		if ctx.Err() != nil {
			fmt.Fprintln(p.out)
			return "", "", ctx.Err()
		}
		if err != nil && line == "" {
			fmt.Fprintln(p.out)
			return "", "", nil // end of input: nothing was decided
		}
		switch strings.ToLower(strings.TrimSpace(line)) {
		case "a", "approve":
			return backend.ApproveOnce, "", nil
		case "r", "reject":
			fmt.Fprint(p.out, "Reason for the agent (optional): ")
			reason, _ := p.readLine(ctx)
			return backend.RejectAndTell, strings.TrimSpace(reason), nil
		case "s", "stop":
			return backend.RejectAndStop, "stopped from the terminal", nil
		case "l", "leave":
			return "", "", nil
		}
	}
}

// preview renders an approval's preview for the terminal: its text fields
// as they are (a diff stays a diff), anything else as indented JSON.
func preview(raw json.RawMessage) string {
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil {
		return string(raw)
	}
	var b strings.Builder
	for _, k := range []string{"command", "cwd", "path", "diff", "url", "method"} {
		if v, ok := m[k].(string); ok && v != "" {
			fmt.Fprintf(&b, "%s: %s\n", k, v)
			delete(m, k)
		}
	}
	if len(m) > 0 {
		rest, _ := json.MarshalIndent(m, "", "  ")
		b.Write(rest)
	}
	return b.String()
}

// isTerminal reports whether r is an interactive terminal; a forwarded
// command's input says whether the client's is (app/engined).
func isTerminal(r any) bool {
	if t, ok := r.(interface{ Terminal() bool }); ok {
		return t.Terminal()
	}
	f, ok := r.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}
