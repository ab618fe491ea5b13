package codex

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"agenthub/backend"
	"agenthub/backend/scrub"
)

// This file is advisory gating: `codex exec --json`, whose approval policy
// is forced to "never" (agent-clis.md B3). Codex acts inside its sandbox
// without asking; AgentHub records each command and file change after the
// fact as a call to [ToolObserved].

// startExec launches `codex exec --json` with the task; it reads no input.
func (s *session) startExec(_ context.Context, env backend.ToolEnv) error {
	if err := s.launch(env, s.cfg.execArgs(s.Task), false, s.onExecLine); err != nil {
		return err
	}
	s.Mu.Lock()
	s.thread = "" // exec has no JSON-RPC: nothing is ever sent
	s.Mu.Unlock()
	return nil
}

// execLine is one line of `codex exec --json`.
type execLine struct {
	Type     string     `json:"type"`
	ThreadID string     `json:"thread_id"`
	Item     *execItem  `json:"item"`
	Usage    *execUsage `json:"usage"`
	Error    *struct {
		Message string `json:"message"`
	} `json:"error"`
	Message string `json:"message"`
}

type execItem struct {
	ID      string `json:"id"`
	Type    string `json:"type"`
	Text    string `json:"text"`
	Command string `json:"command"`
	Output  string `json:"aggregated_output"`
	Exit    *int   `json:"exit_code"`
	Status  string `json:"status"`
	Changes []struct {
		Path string `json:"path"`
		Kind string `json:"kind"`
	} `json:"changes"`
}

type execUsage struct {
	Input  int64 `json:"input_tokens"`
	Cached int64 `json:"cached_input_tokens"`
	Output int64 `json:"output_tokens"`
}

// execItems are the item types exec prints in 0.169.0.
var execItems = map[string]bool{
	"agent_message": true, "reasoning": true, "command_execution": true, "file_change": true,
	"mcp_tool_call": true, "web_search": true, "todo_list": true, "error": true, "collab_tool_call": true,
}

// onExecLine is the reader of `codex exec --json`.
func (s *session) onExecLine(b []byte, cut bool) {
	s.Mu.Lock()
	defer s.Mu.Unlock()
	s.Lines++
	if cut {
		s.CutLine()
		s.Signal()
		return
	}
	if len(bytes.TrimSpace(b)) > 0 {
		s.execLine(b)
	}
	s.Signal()
}

// execLine handles one parsed line; s.Mu is held.
func (s *session) execLine(b []byte) {
	var l execLine
	if err := json.Unmarshal(b, &l); err != nil {
		s.Problem("not a JSON object: "+err.Error(), b)
		return
	}
	switch l.Type {
	case "thread.started":
		s.execThread = l.ThreadID
	case "turn.started":
	case "item.started", "item.updated", "item.completed":
		if l.Item == nil || l.Item.ID == "" || !execItems[l.Item.Type] {
			s.Problem("an item without id or of an unknown type", b)
			return
		}
		if l.Type == "item.completed" {
			s.execItem(*l.Item)
		}
	case "turn.completed":
		if l.Usage != nil {
			s.usage = tokenTotals{Input: l.Usage.Input, Cached: l.Usage.Cached, Output: l.Usage.Output}
		}
		s.turnDone = true
		s.readRollout()
		s.Queue = append(s.Queue, event{kind: evTurnDone, turn: turn{Status: "completed"}})
	case "turn.failed":
		msg := "the turn failed"
		if l.Error != nil {
			msg = l.Error.Message
		}
		s.turnDone = true
		s.readRollout()
		s.Queue = append(s.Queue, event{kind: evTurnDone, turn: turn{Status: "failed",
			Error: execError(msg)}})
	case "error":
		s.lastErr = execError(l.Message)
	default:
		s.Problem(fmt.Sprintf("unknown event type %q", scrub.Clip(l.Type, 40)), b)
	}
}

// execItem queues what a completed item means; s.Mu is held.
func (s *session) execItem(it execItem) {
	switch it.Type {
	case "agent_message":
		s.Queue = append(s.Queue, event{kind: evText, text: it.Text})
	case "command_execution":
		out := it.Output
		s.execSeen.commands = append(s.execSeen.commands, it.Command)
		s.Queue = append(s.Queue, event{kind: evObserved, item: threadItem{Type: "commandExecution", ID: it.ID,
			Command: it.Command, Status: it.Status, Output: &out, Exit: it.Exit}})
	case "file_change":
		s.execSeen.patches++
		ti := threadItem{Type: "fileChange", ID: it.ID, Status: it.Status}
		for _, c := range it.Changes {
			var fc fileChange
			fc.Path, fc.Kind.Type = c.Path, c.Kind
			ti.Changes = append(ti.Changes, fc)
		}
		s.Queue = append(s.Queue, event{kind: evObserved, item: ti})
	}
}

// execError reads an exec error message: exec has no structured error
// information, so an HTTP status is taken from the text Codex prints
// ("unexpected status 401 Unauthorized: …").
func execError(msg string) *turnError {
	e := &turnError{Message: msg}
	var status int
	if i := bytes.Index([]byte(msg), []byte("unexpected status ")); i >= 0 {
		_, _ = fmt.Sscanf(msg[i+len("unexpected status "):], "%d", &status)
	}
	if status != 0 {
		e.Info, _ = json.Marshal(map[string]any{"httpConnectionFailed": map[string]int{"httpStatusCode": status}})
	}
	return e
}
