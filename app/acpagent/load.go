package acpagent

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"

	acp "github.com/coder/acp-go-sdk"

	"agenthub/app/api"
	"agenthub/backend"
)

// linksDir holds, in the data directory, one file per ACP session that ran a
// prompt: the AgentHub session and workspace it is, so an editor can load
// it again (session/load) after either side restarted. Nothing else of the
// session is kept there: its runs are the engine's.
const linksDir = "acp-sessions"

// sessionLink is one such file.
type sessionLink struct {
	Session   string `json:"session"`
	Workspace string `json:"workspace"`
}

// sessionIDs are what NewSession hands out; nothing else names a file.
var sessionIDs = regexp.MustCompile(`^acp_[0-9a-f]{24}$`)

func (a *Agent) linkPath(id string) string {
	return filepath.Join(a.cfg.Core.Config().Home, linksDir, id+".json")
}

// saveLink records the session's AgentHub session once its first run
// started it.
func (a *Agent) saveLink(s *session, hubID string) error {
	raw, err := json.Marshal(sessionLink{Session: hubID, Workspace: s.ws.ID})
	if err != nil {
		return err
	}
	path := a.linkPath(s.id)
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return fmt.Errorf("keep the ACP session %s: %w", s.id, err)
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, raw, 0o600); err != nil {
		return fmt.Errorf("keep the ACP session %s: %w", s.id, err)
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("keep the ACP session %s: %w", s.id, err)
	}
	return nil
}

// LoadSession opens a session an editor had before, on the same workspace,
// and replays its runs as session updates: each prompt as a user message,
// then what the run said and did. Later prompts continue its AgentHub
// session. A run still going when it is loaded is shown as far as it got;
// its approvals wait in the window and the CLI.
func (a *Agent) LoadSession(ctx context.Context, p acp.LoadSessionRequest) (acp.LoadSessionResponse, error) {
	id := string(p.SessionId)
	unknown := &backend.Error{Code: backend.CodeNotFound,
		Message: fmt.Sprintf("no ACP session %q in this data directory (a session is kept once it ran a prompt)", id),
		Next:    "Open a new session with session/new."}
	if !sessionIDs.MatchString(id) {
		return acp.LoadSessionResponse{}, requestError(unknown)
	}
	raw, err := os.ReadFile(a.linkPath(id))
	if errors.Is(err, fs.ErrNotExist) {
		return acp.LoadSessionResponse{}, requestError(unknown)
	}
	if err != nil {
		return acp.LoadSessionResponse{}, requestError(fmt.Errorf("read the ACP session %s: %w", id, err))
	}
	var link sessionLink
	if err := json.Unmarshal(raw, &link); err != nil || link.Session == "" {
		return acp.LoadSessionResponse{}, requestError(fmt.Errorf("the ACP session file of %s is damaged: %v", id, err))
	}
	ws, err := a.workspaceOf(p.Cwd)
	if err != nil {
		return acp.LoadSessionResponse{}, requestError(err)
	}
	if ws.ID != link.Workspace {
		return acp.LoadSessionResponse{}, requestError(&backend.Error{Code: backend.CodeInvalidInput,
			Message: fmt.Sprintf("ACP session %s belongs to another workspace than %s", id, p.Cwd),
			Next:    "Load it with the cwd of its own workspace, or open a new session here."})
	}
	s := &session{id: id, root: filepath.Clean(p.Cwd), ws: ws, hubID: link.Session}
	if err := a.replay(s); err != nil {
		return acp.LoadSessionResponse{}, requestError(err)
	}
	a.mu.Lock()
	a.sessions[id] = s
	a.mu.Unlock()
	return acp.LoadSessionResponse{}, nil
}

// replay sends the session's runs, oldest first.
func (a *Agent) replay(s *session) error {
	runs := api.NewRunsAPI(a.cfg.Core)
	all, err := runs.List(s.ws.ID)
	if err != nil {
		return err
	}
	var mine []backend.RunSummary
	for _, r := range all {
		if r.SessionID == s.hubID {
			mine = append(mine, r)
		}
	}
	slices.SortStableFunc(mine, func(x, y backend.RunSummary) int {
		switch {
		case x.CreatedAt < y.CreatedAt:
			return -1
		case x.CreatedAt > y.CreatedAt:
			return 1
		}
		return 0
	})
	t := &turn{a: a, s: s}
	for _, r := range mine {
		t.send(acp.UpdateUserMessageText(r.Task))
		m := newMapper(s.root)
		for after := int64(0); ; {
			evs, err := runs.Events(r.ID, after, 0)
			if err != nil {
				return err
			}
			for _, ev := range evs {
				for _, u := range m.updates(ev) {
					t.send(u)
				}
				after = ev.Sequence
			}
			if len(evs) < maxEventPage {
				break
			}
		}
	}
	return nil
}

// maxEventPage is RunsAPI.Events' page size: a shorter page is the last.
const maxEventPage = 5000
