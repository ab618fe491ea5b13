package codex

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// maxRaw bounds the raw output kept of one session.
const maxRaw = 64 << 20

// rawLog keeps every stdout line of a session, as printed, in AgentHub's
// data directory beside the database, so a run can be normalised again
// after an adapter fix (issue 8 §6). It holds what the CLI printed: file
// contents and machine paths, like the database itself; it is never logged.
type rawLog struct {
	mu      sync.Mutex
	f       *os.File
	written int64
	full    bool
}

func openRaw(dir, id string) (*rawLog, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("prepare the raw output directory: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, id+".jsonl"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open the raw output file: %w", err)
	}
	return &rawLog{f: f}, nil
}

// rawName is where a session's raw output is, relative to the runtime's
// directory; events name it so, never by its absolute path.
func rawName(id string) string { return "raw/" + id + ".jsonl" }

func (r *rawLog) write(b []byte, cut bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f == nil || r.full {
		return
	}
	if r.written+int64(len(b)) > maxRaw {
		r.full = true
		_, _ = r.f.WriteString(`{"type":"agenthub_raw_truncated"}` + "\n")
		return
	}
	n, _ := r.f.Write(b)
	if cut {
		_, _ = r.f.WriteString(`…` + "\n" + `{"type":"agenthub_line_cut"}`)
	}
	_, _ = r.f.Write([]byte{'\n'})
	r.written += int64(n) + 1
}

func (r *rawLog) close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f != nil {
		_ = r.f.Close()
		r.f = nil
	}
}
