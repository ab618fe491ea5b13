// Package rawlog keeps the raw stdout lines of an agent CLI's session, as
// printed, in AgentHub's data directory beside the database, so a run can
// be normalised again after an adapter fix (issue 8 §6). It holds what the
// CLI printed: file contents and machine paths, like the database itself;
// it is never logged. Every runtime adapter uses it.
package rawlog

import (
	"fmt"
	"os"
	"path/filepath"
	"sync"
)

// maxRaw bounds the raw output kept of one session.
const maxRaw = 64 << 20

// Log is one session's raw output file.
type Log struct {
	mu      sync.Mutex
	f       *os.File
	written int64
	full    bool
}

// Open creates or appends to the session's file in dir.
func Open(dir, id string) (*Log, error) {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return nil, fmt.Errorf("prepare the raw output directory: %w", err)
	}
	f, err := os.OpenFile(filepath.Join(dir, id+".jsonl"), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o600)
	if err != nil {
		return nil, fmt.Errorf("open the raw output file: %w", err)
	}
	return &Log{f: f}, nil
}

// Name is where a session's raw output is, relative to the runtime's
// directory; events name it so, never by its absolute path.
func Name(id string) string { return "raw/" + id + ".jsonl" }

// Write appends one line; cut marks a line that was cut at the reader's cap.
// Past the size cap the log says so once and keeps nothing more.
func (r *Log) Write(b []byte, cut bool) {
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

// Close closes the file; later writes are dropped.
func (r *Log) Close() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.f != nil {
		_ = r.f.Close()
		r.f = nil
	}
}
