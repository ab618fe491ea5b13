// Package engineclient reaches the engine of a data directory over its Unix
// socket: plain HTTP for the API and event stream, and an upgraded
// connection that forwards one CLI command (its arguments, standard streams,
// Ctrl-C and exit code) to run in the engine. It also starts the engine
// when a command needs one and none runs. The server side is app/engined;
// both speak the frames of this file.
package engineclient

import (
	"encoding/binary"
	"fmt"
	"io"
	"sync"
)

// SocketName is the engine's socket inside the data directory.
const SocketName = "engine.sock"

// Paths on the socket that belong to the engine rather than to the API.
const (
	PathExec   = "/engine/exec"
	PathStatus = "/engine/status"
	PathStop   = "/engine/stop"
	// UpgradeProto is the Upgrade token of a forwarded command.
	UpgradeProto = "agenthub-exec/1"
)

// Frame kinds. A forwarded command is a stream of frames each way after
// the HTTP upgrade: one byte of kind, four of big-endian length, payload.
const (
	FrameRequest  byte = 'R' // client → engine: the ExecRequest, first and once
	FrameStdin    byte = 'I' // client → engine: bytes of standard input
	FrameStdinEOF byte = 'E' // client → engine: standard input ended
	FrameSignal   byte = 'S' // client → engine: "interrupt" or "terminate"
	FrameStdout   byte = 'O' // engine → client
	FrameStderr   byte = 'X' // engine → client
	FrameExit     byte = 'C' // engine → client: the exit code, decimal; last
)

// maxFrame bounds one frame so a broken peer cannot make the other side
// allocate without limit.
const maxFrame = 1 << 20

// ExecRequest is what the engine needs to run a command as the user typed
// it. Env carries only the variables a command reads per invocation
// (AGENTHUB_*, locale): the engine's own environment (keys, agent CLI
// paths) is that of the command that started it.
type ExecRequest struct {
	Args      []string          `json:"args"`
	Cwd       string            `json:"cwd"`
	Env       map[string]string `json:"env"`
	StdinTTY  bool              `json:"stdinTty"`
	StdoutTTY bool              `json:"stdoutTty"`
}

// Signals a client forwards.
const (
	SignalInterrupt = "interrupt"
	SignalTerminate = "terminate"
)

// FrameWriter writes frames; it is safe for concurrent use (stdout and
// stderr of one command share a connection).
type FrameWriter struct {
	mu sync.Mutex
	w  io.Writer
}

// NewFrameWriter writes frames to w.
func NewFrameWriter(w io.Writer) *FrameWriter { return &FrameWriter{w: w} }

// Write sends one frame.
func (f *FrameWriter) Write(kind byte, payload []byte) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	for len(payload) >= maxFrame {
		if err := f.write(kind, payload[:maxFrame-1]); err != nil {
			return err
		}
		payload = payload[maxFrame-1:]
	}
	return f.write(kind, payload)
}

func (f *FrameWriter) write(kind byte, payload []byte) error {
	var h [5]byte
	h[0] = kind
	binary.BigEndian.PutUint32(h[1:], uint32(len(payload)))
	if _, err := f.w.Write(h[:]); err != nil {
		return err
	}
	_, err := f.w.Write(payload)
	return err
}

// Stream is an io.Writer that sends each Write as one frame of a kind.
type Stream struct {
	F    *FrameWriter
	Kind byte
}

func (s Stream) Write(p []byte) (int, error) {
	if err := s.F.Write(s.Kind, p); err != nil {
		return 0, err
	}
	return len(p), nil
}

// ReadFrame reads one frame.
func ReadFrame(r io.Reader) (byte, []byte, error) {
	var h [5]byte
	if _, err := io.ReadFull(r, h[:]); err != nil {
		return 0, nil, err
	}
	n := binary.BigEndian.Uint32(h[1:])
	if n >= maxFrame {
		return 0, nil, fmt.Errorf("engine frame of %d bytes exceeds the limit", n)
	}
	p := make([]byte, n)
	if _, err := io.ReadFull(r, p); err != nil {
		return 0, nil, fmt.Errorf("read an engine frame: %w", err)
	}
	return h[0], p, nil
}
