// Command seed writes one finished run of N events (default 100,000) into an
// AgentHub data directory, through the real store, for the UI benchmark
// (bench/ui/run.sh): streamed messages, tool calls with file reads and
// results, approved patches whose previews carry real diffview diffs (one of
// them a 10,000-line change across three files), and the lifecycle around
// them. It prints the run's id. Run it before `agenthub serve` opens the
// directory; it never touches a directory that already has a database.
package main

import (
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"agenthub/backend"
	"agenthub/backend/store"
	"agenthub/diffview"
)

func main() {
	home := flag.String("home", "", "data directory to create (must not hold a database yet)")
	events := flag.Int("events", 100_000, "events in the run")
	workspace := flag.String("workspace", "", "an existing directory to register as the run's workspace")
	flag.Parse()
	if *home == "" || *workspace == "" {
		fmt.Fprintln(os.Stderr, "usage: seed -home DIR -workspace DIR [-events N]")
		os.Exit(2)
	}
	id, err := seed(context.Background(), *home, *workspace, *events)
	if err != nil {
		fmt.Fprintln(os.Stderr, "seed:", err)
		os.Exit(1)
	}
	fmt.Println(id)
}

// The database file name app/api opens (api.DBFile); not imported, so this
// helper does not pull in the whole app.
const dbFile = "agenthub.db"

func seed(ctx context.Context, home, wsDir string, n int) (string, error) {
	db := filepath.Join(home, dbFile)
	if _, err := os.Stat(db); err == nil {
		return "", fmt.Errorf("%s already exists", db)
	}
	abs, err := filepath.Abs(wsDir)
	if err != nil {
		return "", err
	}
	st, err := store.Open(ctx, db)
	if err != nil {
		return "", err
	}
	defer st.Close()
	by := store.By{Actor: "bench", Surface: backend.SurfaceCLI}
	ws := backend.Workspace{ID: "ws_bench", Name: filepath.Base(abs), Path: abs, DisplayPath: abs}
	if err := st.AddWorkspace(ctx, ws, by); err != nil {
		return "", err
	}
	const runID, sesID = "run_bench_ui", "ses_bench_ui"
	_, err = st.Do(ctx, func(tx *store.Tx) error {
		if err := tx.CreateSession(sesID, ws.ID, "UI benchmark"); err != nil {
			return err
		}
		_, err := tx.CreateRun(store.RunRecord{ID: runID, SessionID: sesID, WorkspaceID: ws.ID, Profile: "demo",
			AgentID: "demo", Runtime: "native", Task: fmt.Sprintf("UI benchmark: %d events", n), Scripted: true,
			Actor: "bench", Surface: backend.SurfaceCLI}, map[string]any{"profile": "demo", "task": "UI benchmark"})
		if err != nil {
			return err
		}
		for _, to := range []backend.RunState{backend.RunPlanned, backend.RunAccepted, backend.RunPreparing, backend.RunRunning} {
			if _, err := tx.Transition(runID, to, "", nil); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return "", err
	}
	big, err := bigPreview()
	if err != nil {
		return "", err
	}
	w := &writer{st: st, ctx: ctx, run: runID, left: n - 5 - 1} // created + 4 transitions already; completed last
	for turn := 0; w.left > 0; turn++ {
		w.turn(turn, big)
		if w.err != nil {
			return "", w.err
		}
	}
	if err := w.flush(); err != nil {
		return "", err
	}
	_, err = st.Do(ctx, func(tx *store.Tx) error {
		_, err := tx.Transition(runID, backend.RunCompleted, "", &store.End{DoneReason: "completed"})
		return err
	})
	return runID, err
}

type event struct {
	typ     backend.EventType
	payload any
}

// writer appends events in jobs of a few thousand, stopping at `left`.
type writer struct {
	st    *store.Store
	ctx   context.Context
	run   string
	left  int
	batch []event
	err   error
}

func (w *writer) add(typ backend.EventType, payload any) {
	if w.left <= 0 || w.err != nil {
		return
	}
	w.left--
	w.batch = append(w.batch, event{typ, payload})
	if len(w.batch) >= 5000 {
		w.err = w.flush()
	}
}

func (w *writer) flush() error {
	batch := w.batch
	w.batch = nil
	_, err := w.st.Do(w.ctx, func(tx *store.Tx) error {
		for _, e := range batch {
			if _, err := tx.Append(w.run, e.typ, e.payload); err != nil {
				return err
			}
		}
		return nil
	})
	return err
}

var words = strings.Fields("the agent reads the workspace and proposes a small change to the parser so that " +
	"every token keeps its offset; then it runs the tests, reads the failures and tries again with a narrower edit")

// turn is one step of the scripted agent: a streamed message (8 deltas and
// the completed text), a tool call with its file read and result, and every
// 400 turns an approved patch (turn 200 carries the 10,000-line diff).
func (w *writer) turn(i int, big any) {
	msg := fmt.Sprintf("msg_%06d", i)
	var text strings.Builder
	for d := range 8 {
		chunk := fmt.Sprintf("%s %s %s ", words[(i+d)%len(words)], words[(i+2*d+1)%len(words)], words[(i+3*d+2)%len(words)])
		if d == 3 && i%5 == 0 {
			chunk += "\n\n- `internal/parse.go` keeps offsets\n- **tests** pass\n\n"
		}
		text.WriteString(chunk)
		w.add(backend.EvMessageDelta, map[string]any{"messageId": msg, "text": chunk})
	}
	w.add(backend.EvMessageCompleted, map[string]any{"messageId": msg, "role": "assistant", "text": text.String()})
	call := fmt.Sprintf("call_%06d", i)
	path := fmt.Sprintf("internal/pkg%02d/file%03d.go", i%17, i%211)
	w.add(backend.EvToolCall, map[string]any{"toolCallId": call, "name": "read_file", "arguments": map[string]any{"path": path}})
	w.add(backend.EvFileRead, map[string]any{"tool": "read_file", "path": path, "bytes": 1800 + i%900, "startLine": 1, "endLine": 60})
	w.add(backend.EvToolResult, map[string]any{"toolCallId": call, "status": "Succeeded", "isError": false,
		"content": fmt.Sprintf("package pkg%02d\n\n// file %d: %s\nfunc F%d() int { return %d }\n", i%17, i, text.String()[:40], i, i)})
	if i%400 != 200 {
		return
	}
	apr := fmt.Sprintf("apr_%06d", i)
	preview := big
	if i != 200 {
		preview = smallPreview(i)
	}
	w.add(backend.EvApprovalRequested, map[string]any{"approvalId": apr, "runId": w.run, "toolCallId": call,
		"kind": "patch", "title": "Edit files", "preview": preview, "risk": "medium", "subject": map[string]any{"kind": "patch"},
		"subjectHash": "sha256:bench", "policyTrace": []any{}, "enforcement": "enforced",
		"decisionsOffered": []string{"approve_once", "reject_and_tell"}, "status": "pending", "createdAt": "2026-01-01T00:00:00Z"})
	w.add(backend.EvApprovalResolved, map[string]any{"approvalId": apr, "decision": "approve_once", "resolver": "bench"})
	w.add(backend.EvPatchApplied, map[string]any{"tool": "write_file", "checkpointId": "ckp_" + apr,
		"files": []map[string]string{{"path": "bench/big.ts", "action": "modified"}}})
}

func fileDiff(path string, before, after string) (map[string]any, error) {
	var old diffview.Side
	if before != "" {
		old = diffview.Side{Path: path, Content: []byte(before)}
	}
	fd, err := diffview.Diff(old, diffview.Side{Path: path, Content: []byte(after)}, diffview.Options{})
	if err != nil {
		return nil, err
	}
	op := "modify"
	if before == "" {
		op = "create"
	}
	raw, err := json.Marshal(fd)
	if err != nil {
		return nil, err
	}
	return map[string]any{"path": path, "operation": op, "unified": string(diffview.Unified(fd)), "diff": json.RawMessage(raw)}, nil
}

// bigPreview is a three-file change whose diff has about 10,000 lines: a
// TypeScript file with every fifth of 8,000 lines edited, a new Go file and
// a small Markdown edit.
func bigPreview() (any, error) {
	var before, after strings.Builder
	for i := range 8000 {
		fmt.Fprintf(&before, "export const value%d = compute(%d, 'item-%d'); // keep\n", i, i, i)
		if i%5 == 0 {
			fmt.Fprintf(&after, "export const value%d = compute(%d, 'item-%d', { cached: true }); // keep\n", i, i*2, i)
		} else {
			fmt.Fprintf(&after, "export const value%d = compute(%d, 'item-%d'); // keep\n", i, i, i)
		}
	}
	var gofile strings.Builder
	gofile.WriteString("package bench\n\n")
	for i := range 300 {
		fmt.Fprintf(&gofile, "// F%d returns %d.\nfunc F%d() int { return %d }\n\n", i, i, i, i)
	}
	files := []struct{ path, before, after string }{
		{"bench/big.ts", before.String(), after.String()},
		{"bench/gen/funcs.go", "", gofile.String()},
		{"docs/NOTES.md", "# Notes\n\nOld line.\nKeep.\n", "# Notes\n\nNew line.\nKeep.\n"},
	}
	var out []any
	for _, f := range files {
		d, err := fileDiff(f.path, f.before, f.after)
		if err != nil {
			return nil, err
		}
		out = append(out, d)
	}
	return map[string]any{"files": out}, nil
}

func smallPreview(i int) any {
	d, err := fileDiff(fmt.Sprintf("internal/pkg%02d/file%03d.go", i%17, i%211), "package p\n\nfunc A() int { return 1 }\n",
		fmt.Sprintf("package p\n\nfunc A() int { return %d }\n", i))
	if err != nil {
		return map[string]any{}
	}
	return d
}
