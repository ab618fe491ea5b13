package tools

import (
	"sync"

	"agenthub/backend"
	"agenthub/backend/redact"
)

// maxStreamedShellOutput bounds what one command streams as run.tool.delta:
// the live view of its output, not a second copy of a runaway log. The
// result still carries the capped output.
const maxStreamedShellOutput = 2 * maxShellOutput

// ShellStream is a command's Tee: its output, as it arrives, becomes
// run.tool.delta events of the call. Text is cut only where no secret can
// straddle two deltas (redact.Stream), since each event is redacted on its
// own, and machine paths are scrubbed like the result's.
type ShellStream struct {
	mu     sync.Mutex
	emit   func(backend.EventType, any)
	callID string
	scrub  scrubber
	cut    redact.Stream
	taken  int // bytes given to cut: what is streamed in the end
}

// NewShellStream streams the output of the command of call callID as its
// run.tool.delta events, or is nil when env cannot emit. Pass it as the Tee
// of [Shell.Start] and Close it after [Shell.Finish].
func NewShellStream(env backend.ToolEnv, callID string) *ShellStream {
	if env.Emit == nil {
		return nil
	}
	return &ShellStream{emit: env.Emit, callID: callID, scrub: newScrubber(env.WorkspaceRoot)}
}

// Write is called from the stdout and stderr copiers at once.
func (s *ShellStream) Write(b []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if n := min(len(b), maxStreamedShellOutput-s.taken); n > 0 {
		s.taken += n
		s.send(s.cut.Push(string(b[:n])))
	}
	return len(b), nil
}

// Close sends what the cutter still holds once the command has ended.
func (s *ShellStream) Close() {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.send(s.cut.Flush())
}

func (s *ShellStream) send(text string) {
	if text == "" {
		return
	}
	s.emit(backend.EvToolDelta, map[string]string{"toolCallId": s.callID, "text": s.scrub.text(text)})
}
