package codex

import (
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"strings"

	"agenthub/backend"
	"agenthub/backend/agentpath"
	"agenthub/backend/scrub"
)

// Proxy tool names. The engine sees Codex's approval requests as calls to
// these; their arguments name the session and the request.
const (
	ToolSession  = "codex.session"  // starts the CLI, records its diagnostics
	ToolCommand  = "codex.command"  // shell approval
	ToolFile     = "codex.file"     // staged patch of one file of a Codex patch
	ToolObserved = "codex.observed" // records a command or file change Codex made without asking
)

// ToolNames lists the tools a Codex profile offers the engine.
func ToolNames() []string { return []string{ToolSession, ToolCommand, ToolFile, ToolObserved} }

// Tools returns the proxy tools by name, for the engine's tool table. They
// serve every Codex profile; a call finds its session by id.
func Tools() map[string]backend.Tool {
	return map[string]backend.Tool{
		ToolSession:  sessionTool(),
		ToolCommand:  commandTool{},
		ToolFile:     fileTool{},
		ToolObserved: observedTool{},
	}
}

// callArgs are a proxy call's arguments. They are recorded in events, so
// they never hold an absolute path: paths are workspace-relative, and one
// outside the workspace is left out and its field listed in Outside.
type callArgs struct {
	Session string `json:"session"`
	Request string `json:"request"` // Codex's request id
	Item    string `json:"item"`    // Codex's item id

	// A command (codex.command).
	Command   string          `json:"command,omitempty"`
	Argv      []string        `json:"argv,omitempty"`
	Cwd       string          `json:"cwd,omitempty"`
	Reason    string          `json:"reason,omitempty"`
	Escalated bool            `json:"escalated,omitempty"`
	Actions   []commandAction `json:"actions,omitempty"`

	// One file of a file change (codex.file): Index of Of files.
	File  *fileArgs `json:"file,omitempty"`
	Index int       `json:"index,omitempty"`
	Of    int       `json:"of,omitempty"`

	Outside []string `json:"outside,omitempty"`
}

// fileArgs is one file of a Codex patch, workspace-relative.
type fileArgs struct {
	Path string `json:"path,omitempty"`
	// Op is add, delete or update; a move is two files: move_from (the
	// source is deleted) and move_to (the target gets the updated source).
	Op   string `json:"op"`
	From string `json:"from,omitempty"` // move_to: the source
	// Diff is the content of an added file, or the hunks of an update.
	Diff    string `json:"diff,omitempty"`
	Outside bool   `json:"outside,omitempty"` // Path (or From) is outside the workspace
}

// fileArgs turns the changes of a fileChange item into workspace-relative
// files, one per call.
func (s *session) fileArgs(changes []fileChange) ([]fileArgs, error) {
	var out []fileArgs
	for _, c := range changes {
		rel, ok := s.rel(c.Path)
		switch {
		case c.Kind.Type == "add":
			out = append(out, fileArgs{Path: rel, Op: "add", Diff: c.Diff, Outside: !ok})
		case c.Kind.Type == "delete":
			out = append(out, fileArgs{Path: rel, Op: "delete", Outside: !ok})
		case c.Kind.Type == "update" && c.Kind.MovePath == nil:
			out = append(out, fileArgs{Path: rel, Op: "update", Diff: c.Diff, Outside: !ok})
		case c.Kind.Type == "update":
			to, tok := s.rel(*c.Kind.MovePath)
			hunks, _, _ := strings.Cut(c.Diff, "\n\nMoved to: ")
			out = append(out, fileArgs{Path: rel, Op: "move_from", Outside: !ok},
				fileArgs{Path: to, Op: "move_to", From: rel, Diff: hunks, Outside: !ok || !tok})
		default:
			return nil, fmt.Errorf("unknown change kind %q", c.Kind.Type)
		}
	}
	return out, nil
}

// rel makes an absolute path of Codex relative to the workspace root (in
// either spelling); false when it is outside.
func (s *session) rel(abs string) (string, bool) {
	if !filepath.IsAbs(abs) {
		abs = filepath.Join(s.Root, abs)
	}
	return agentpath.Rel([]string{s.Root, s.RealRoot}, abs)
}

// proxyCalls turns an approval request into the engine's calls.
func (s *session) proxyCalls(r *request) ([]backend.ToolCallRequest, error) {
	var out []backend.ToolCallRequest
	add := func(id, name string, a callArgs) error {
		b, err := json.Marshal(a)
		if err != nil {
			return fmt.Errorf("encode the call of %s: %w", name, err)
		}
		out = append(out, backend.ToolCallRequest{ID: id, Name: name, Arguments: b})
		return nil
	}
	base := callArgs{Session: s.ID, Request: r.key, Item: r.itemID}
	if r.method == methodCommandApproval {
		return out, add(r.calls[0], ToolCommand, s.commandArgs(base, r.cmd))
	}
	for i := range r.files {
		a := base
		f := r.files[i]
		a.File, a.Index, a.Of = &f, i+1, len(r.files)
		if f.Outside {
			a.Outside = []string{"path"}
		}
		if err := add(r.calls[i], ToolFile, a); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// lookup finds the live session and request a proxy call stands for.
func lookup(callID string, raw json.RawMessage) (*session, *request, callArgs, error) {
	a, err := decodeArgs(raw)
	if err != nil {
		return nil, nil, a, err
	}
	s, ok := live.ByID(a.Session)
	if !ok {
		return nil, nil, a, errGone
	}
	s.Mu.Lock()
	r, ok := s.reqs[callID]
	s.Mu.Unlock()
	if !ok || r.key != a.Request {
		return s, nil, a, fmt.Errorf("Codex made no request %s", scrub.Clip(a.Request, 40))
	}
	return s, r, a, nil
}

// decodeArgs reads a proxy call's arguments without needing the session:
// Action must work from the arguments alone, so the engine can re-check a
// call after a long wait.
func decodeArgs(raw json.RawMessage) (callArgs, error) {
	var a callArgs
	if err := json.Unmarshal(raw, &a); err != nil || a.Session == "" {
		return a, errors.New("not a Codex request")
	}
	return a, nil
}

// outsideError refuses a path outside the workspace (AP3): the call fails,
// Codex's request is declined and the agent told, the run goes on.
func outsideError(what string) error {
	return &backend.Error{Code: backend.FailOutsideAllowlist, Detail: "path",
		Message: what + " is outside the workspace; only paths inside it can be used"}
}

// genericSchema is the argument schema of every proxy tool; only the
// runtime ever calls them.
var genericSchema = json.RawMessage(`{"type":"object","properties":{"session":{"type":"string"},` +
	`"request":{"type":"string"},"item":{"type":"string"}},"required":["session"]}`)

func spec(name, what string) backend.ToolSpec {
	return backend.ToolSpec{Name: name, Schema: genericSchema, Description: what +
		" Only the Codex runtime calls this tool, for a request of the Codex CLI."}
}

// errGone is the failure of a run whose session no longer exists: the
// process ended, or AgentHub restarted while the run waited (a Codex
// session cannot be resumed).
var errGone = &backend.Error{Code: backend.FailRunInterrupted,
	Message: "the Codex process of this run is gone (AgentHub restarted or the process ended); Codex runs cannot be resumed"}
