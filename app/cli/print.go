package cli

import (
	"encoding/json"
	"fmt"
	"strings"

	"agenthub/backend"
)

// maxShownLines bounds how much of a tool result the human view prints.
const maxShownLines = 6

// print writes one event: its envelope as a JSON line with --json, else a
// readable line. Streamed text is merged, never one line per delta.
func (f *follower) print(ev backend.Event) {
	if f.json {
		b, err := json.Marshal(ev)
		if err == nil {
			fmt.Fprintf(f.out, "%s\n", b)
		}
		return
	}
	var p map[string]any
	_ = json.Unmarshal(ev.Payload, &p)
	if ev.Type != backend.EvMessageDelta && f.inText {
		fmt.Fprintln(f.out)
		f.inText = false
	}
	switch ev.Type {
	case backend.EvMessageDelta:
		if !f.inText {
			fmt.Fprint(f.out, "agent: ")
			f.inText = true
		}
		fmt.Fprint(f.out, str(p["text"]))
	case backend.EvRunCreated:
		fmt.Fprintf(f.out, "run %s created (profile %s)\n", ev.RunID, str(p["profile"]))
	case backend.EvRunStatusChanged:
		fmt.Fprintf(f.out, "  state: %s\n", str(p["to"]))
	case backend.EvToolCall:
		fmt.Fprintf(f.out, "→ %s %s\n", str(p["name"]), compact(p["arguments"]))
	case backend.EvToolResult:
		fmt.Fprintf(f.out, "← %s%s\n", str(p["status"]), indent(str(p["content"])))
	case backend.EvApprovalRequested:
		fmt.Fprintf(f.out, "? approval needed: %s (%s, risk %s)\n", str(p["title"]), str(p["kind"]), str(p["risk"]))
	case backend.EvApprovalResolved:
		fmt.Fprintf(f.out, "  decided: %s\n", firstNonEmpty(str(p["decision"]), str(p["outcome"])))
	case backend.EvGatingAdvisory:
		fmt.Fprintf(f.out, "! advisory gating accepted by the profile (%s) for %s: AgentHub records these actions "+
			"but cannot stop them\n", str(p["acceptedBy"]), strings.Join(strs(p["kinds"]), ", "))
	case backend.EvRunCompleted:
		fmt.Fprintf(f.out, "✓ completed (%s)\n", str(p["doneReason"]))
	case backend.EvRunFailed:
		fmt.Fprintf(f.out, "✗ failed: %s (%s)\n", str(p["message"]), str(p["code"]))
		if next := firstNonEmpty(str(p["next"]), str(p["recovery"])); next != "" { // the failure's own step first
			fmt.Fprintf(f.out, "  next: %s\n", next)
		}
	case backend.EvRunCancelled:
		fmt.Fprintf(f.out, "■ cancelled (%s)\n", str(p["doneReason"]))
	}
}

// strs reads a JSON array of strings.
func strs(v any) []string {
	list, _ := v.([]any)
	out := make([]string, 0, len(list))
	for _, x := range list {
		out = append(out, str(x))
	}
	return out
}

func str(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	if v == nil {
		return ""
	}
	return fmt.Sprint(v)
}

func compact(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	s := string(b)
	if len(s) > 160 {
		s = s[:157] + "..."
	}
	return s
}

// indent shows the first lines of a tool result under its arrow.
func indent(s string) string {
	s = strings.TrimRight(s, "\n")
	if s == "" {
		return ""
	}
	lines := strings.Split(s, "\n")
	more := ""
	if len(lines) > maxShownLines {
		more = fmt.Sprintf("\n    … %d more lines", len(lines)-maxShownLines)
		lines = lines[:maxShownLines]
	}
	return "\n    " + strings.Join(lines, "\n    ") + more
}

func firstNonEmpty(a, b string) string {
	if a != "" {
		return a
	}
	return b
}
