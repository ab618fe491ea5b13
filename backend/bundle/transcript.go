package bundle

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html"
	"strings"

	"agenthub/backend"
)

// entry is one transcript line: who, what, and a block of text to show
// verbatim (code, output, a reason).
type entry struct {
	seq   int64
	at    string
	title string
	block string
}

// maxBlock bounds one block of a transcript (a tool's output can be large;
// events.jsonl keeps it whole).
const maxBlock = 8 << 10

// transcriptEntries picks the readable events: the task, messages, tool
// calls and results, files read and changed, approvals and the run's end.
func transcriptEntries(evs []backend.Event) []entry {
	var out []entry
	for _, ev := range evs {
		var p map[string]any
		switch ev.Type {
		case backend.EvRunCreated, backend.EvMessageCompleted, backend.EvToolCall, backend.EvToolResult,
			backend.EvFileRead, backend.EvPatchApplied, backend.EvPatchRejected, backend.EvApprovalRequested,
			backend.EvApprovalResolved, backend.EvRunCompleted, backend.EvRunFailed, backend.EvRunCancelled:
			if err := json.Unmarshal(ev.Payload, &p); err != nil {
				p = map[string]any{}
			}
		default:
			continue
		}
		e := entry{seq: ev.Sequence, at: ev.Timestamp}
		switch ev.Type {
		case backend.EvRunCreated:
			e.title, e.block = "Task", str(p, "task")
		case backend.EvMessageCompleted:
			e.title, e.block = "Agent", str(p, "text")
		case backend.EvToolCall:
			e.title = "Tool call: " + str(p, "name")
			if a, ok := p["arguments"]; ok {
				e.block = compact(a)
			}
		case backend.EvToolResult:
			e.title = "Tool result"
			if s := str(p, "status"); s != "" {
				e.title += " (" + s + ")"
			}
			e.block = str(p, "content")
		case backend.EvFileRead:
			e.title = "Read " + str(p, "path")
		case backend.EvPatchApplied:
			e.title = "Changed " + strings.Join(paths(p), ", ")
		case backend.EvPatchRejected:
			e.title = "Patch rejected"
			e.block = str(p, "reason")
		case backend.EvApprovalRequested:
			e.title = fmt.Sprintf("Approval asked (%s, risk %s): %s", str(p, "kind"), str(p, "risk"), str(p, "title"))
		case backend.EvApprovalResolved:
			e.title = "Approval decided: " + str(p, "decision")
			e.block = str(p, "reason")
		default: // the terminal events
			e.title = "Run " + strings.TrimPrefix(string(ev.Type), "run.")
			e.block = strings.TrimSpace(str(p, "code") + " " + str(p, "message"))
		}
		if len(e.block) > maxBlock {
			e.block = e.block[:maxBlock] + fmt.Sprintf("\n… (%d more bytes in events.jsonl, event #%d)",
				len(e.block)-maxBlock, ev.Sequence)
		}
		out = append(out, e)
	}
	return out
}

func str(p map[string]any, k string) string {
	s, _ := p[k].(string)
	return s
}

func compact(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	b, err := json.Marshal(v)
	if err != nil {
		return ""
	}
	return string(b)
}

func paths(p map[string]any) []string {
	files, _ := p["files"].([]any)
	var out []string
	for _, f := range files {
		if m, ok := f.(map[string]any); ok {
			out = append(out, str(m, "path"))
		}
	}
	if len(out) == 0 {
		out = append(out, str(p, "path"))
	}
	return out
}

// transcripts renders transcript.md and transcript.html from a cleaned run
// and cleaned events.
func transcripts(run RunInfo, evs []backend.Event) ([]byte, []byte, error) {
	entries := transcriptEntries(evs)
	var md bytes.Buffer
	fmt.Fprintf(&md, "# %s\n\nRun `%s` · %s · profile %s · workspace %s · started %s\n\n", mdLine(run.Task), run.ID,
		run.State, run.Profile, run.Workspace, run.CreatedAt)
	for _, e := range entries {
		fmt.Fprintf(&md, "### #%d %s\n\n<sub>%s</sub>\n\n", e.seq, mdLine(e.title), e.at)
		if e.block != "" {
			fence := "```"
			for strings.Contains(e.block, fence) {
				fence += "`"
			}
			fmt.Fprintf(&md, "%s\n%s\n%s\n\n", fence, e.block, fence)
		}
	}

	var h bytes.Buffer
	esc := html.EscapeString
	h.WriteString(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'">
<title>` + esc(run.Task) + `</title>
<style>
body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:2rem auto;padding:0 1rem;color:#1b1f24;background:#fff}
header{border-bottom:1px solid #d0d7de;margin-bottom:1rem}
section{border-left:3px solid #d0d7de;padding:.25rem .75rem;margin:.75rem 0}
h3{font-size:1rem;margin:0}
time{color:#57606a;font-size:.8rem}
pre{white-space:pre-wrap;word-break:break-word;background:#f6f8fa;padding:.5rem;border-radius:4px;font-size:13px}
a{color:#0969da}
@media (prefers-color-scheme:dark){body{color:#e6edf3;background:#0d1117}pre{background:#161b22}}
</style></head><body>
`)
	fmt.Fprintf(&h, "<header><h1>%s</h1><p>Run <code>%s</code> · %s · profile %s · workspace %s · started %s</p></header>\n",
		esc(run.Task), esc(run.ID), esc(string(run.State)), esc(run.Profile), esc(run.Workspace), esc(run.CreatedAt))
	for _, e := range entries {
		fmt.Fprintf(&h, "<section id=\"e%d\"><h3><a href=\"#e%d\">#%d</a> %s</h3><time>%s</time>", e.seq, e.seq,
			e.seq, esc(e.title), esc(e.at))
		if e.block != "" {
			fmt.Fprintf(&h, "<pre>%s</pre>", esc(e.block))
		}
		h.WriteString("</section>\n")
	}
	h.WriteString("</body></html>\n")
	return md.Bytes(), h.Bytes(), nil
}

// mdLine keeps a title on one Markdown line.
func mdLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}
