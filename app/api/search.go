package api

import (
	"context"
	"path/filepath"
	"strings"

	"agenthub/backend"
	"agenthub/backend/store"
)

// SearchRequest is a search across every run. Workspace is a workspace's id,
// name or path; Status holds run states (any case); Runtime matches the run's
// runtime or profile; From and To are dates or timestamps (To exclusive).
type SearchRequest struct {
	Query         string   `json:"query"`
	Workspace     string   `json:"workspace,omitempty"`
	Status        []string `json:"status,omitempty"`
	Runtime       string   `json:"runtime,omitempty"`
	From          string   `json:"from,omitempty"`
	To            string   `json:"to,omitempty"`
	NeedsApproval bool     `json:"needsApproval,omitempty"`
	ChangedFile   string   `json:"changedFile,omitempty"`
	RunID         string   `json:"runId,omitempty"`
	Limit         int      `json:"limit,omitempty"`
}

// SearchResult is one matching event: open run RunID at event Sequence.
type SearchResult struct {
	RunID         string              `json:"runId"`
	Sequence      int64               `json:"sequence"`
	Type          backend.EventType   `json:"type"`
	Timestamp     string              `json:"timestamp"`
	Snippet       []store.SnippetPart `json:"snippet"`
	Task          string              `json:"task"`
	State         backend.RunState    `json:"state"`
	WorkspaceID   string              `json:"workspaceId"`
	WorkspaceName string              `json:"workspaceName"`
	Profile       string              `json:"profile"`
	Runtime       string              `json:"runtime"`
	CreatedAt     string              `json:"createdAt"`
}

// SearchAPI searches the text of every run (issue 19).
type SearchAPI struct{ core *Core }

// NewSearchAPI returns the facade.
func NewSearchAPI(c *Core) *SearchAPI { return &SearchAPI{core: c} }

// Search returns the best matches first.
func (s *SearchAPI) Search(in SearchRequest) ([]SearchResult, error) {
	db, err := s.core.db()
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	f := store.SearchFilter{Query: in.Query, Runtime: in.Runtime, From: in.From, To: in.To,
		NeedsApproval: in.NeedsApproval, ChangedFile: strings.TrimPrefix(in.ChangedFile, "./"), RunID: in.RunID,
		Limit: in.Limit}
	for _, st := range in.Status {
		state, ok := parseState(st)
		if !ok {
			return nil, &backend.Error{Code: backend.CodeInvalidInput, Message: "unknown run status " + quote(st),
				Next: "Use one of: " + stateNames() + "."}
		}
		f.States = append(f.States, state)
	}
	wss, err := db.Workspaces(ctx)
	if err != nil {
		return nil, err
	}
	names := map[string]string{}
	for _, w := range wss {
		names[w.ID] = w.Name
	}
	if in.Workspace != "" {
		id, ok := findWorkspace(wss, in.Workspace)
		if !ok {
			return nil, &backend.Error{Code: backend.CodeNotFound, Message: "no workspace " + quote(in.Workspace),
				Next: "Name a workspace by its id, name or path: `agenthub workspace list` shows them."}
		}
		f.WorkspaceID = id
	}
	// The index follows the commits by milliseconds; a search waits for
	// what was committed before it (a process that just opened the store
	// may be further behind).
	if behind, err := db.IndexBehind(ctx); err != nil {
		return nil, err
	} else if behind {
		if err := db.FlushIndex(ctx); err != nil {
			return nil, err
		}
	}
	hits, err := db.Search(ctx, f)
	if err != nil {
		return nil, err
	}
	out := make([]SearchResult, len(hits))
	for i, h := range hits {
		out[i] = SearchResult{RunID: h.RunID, Sequence: h.Sequence, Type: h.Type, Timestamp: h.Timestamp,
			Snippet: h.Snippet, Task: h.Task, State: h.State, WorkspaceID: h.WorkspaceID,
			WorkspaceName: names[h.WorkspaceID], Profile: h.Profile, Runtime: h.Runtime, CreatedAt: h.CreatedAt}
	}
	return out, nil
}

func parseState(s string) (backend.RunState, bool) {
	for _, st := range backend.AllRunStates {
		if strings.EqualFold(string(st), s) {
			return st, true
		}
	}
	return "", false
}

func stateNames() string {
	var n []string
	for _, st := range backend.AllRunStates {
		n = append(n, string(st))
	}
	return strings.Join(n, ", ")
}

func quote(s string) string { return "“" + s + "”" }

// findWorkspace matches a workspace by id, name, shown path or path.
func findWorkspace(wss []backend.Workspace, w string) (string, bool) {
	abs, _ := filepath.Abs(w)
	for _, ws := range wss {
		if ws.ID == w || ws.Name == w || ws.DisplayPath == w || ws.Path == w || ws.Path == abs {
			return ws.ID, true
		}
	}
	return "", false
}

// RunsPageRequest asks for a page of the runs list: newest first,
// Before the cursor of the previous page's last run (0 for the first page).
type RunsPageRequest struct {
	Workspace string   `json:"workspace,omitempty"` // id, name or path
	Status    []string `json:"status,omitempty"`
	Before    int64    `json:"before,omitempty"`
	Limit     int      `json:"limit,omitempty"` // default 100, at most 1,000
}

// RunsPage is one page of the runs list.
type RunsPage struct {
	Runs []store.RunListItem `json:"runs"`
	More bool                `json:"more"` // another page follows: pass the last run's cursor as before
}

// RunsPage lists runs a page at a time, with what tells runs of the same
// task apart (start time, workspace, id) and the resume links both ways.
func (s *SearchAPI) RunsPage(in RunsPageRequest) (RunsPage, error) {
	db, err := s.core.db()
	if err != nil {
		return RunsPage{}, err
	}
	ctx := context.Background()
	f := store.RunPageFilter{Before: in.Before, Limit: in.Limit}
	for _, st := range in.Status {
		state, ok := parseState(st)
		if !ok {
			return RunsPage{}, &backend.Error{Code: backend.CodeInvalidInput, Message: "unknown run status " + quote(st),
				Next: "Use one of: " + stateNames() + "."}
		}
		f.States = append(f.States, state)
	}
	if in.Workspace != "" {
		wss, err := db.Workspaces(ctx)
		if err != nil {
			return RunsPage{}, err
		}
		id, ok := findWorkspace(wss, in.Workspace)
		if !ok {
			return RunsPage{}, &backend.Error{Code: backend.CodeNotFound, Message: "no workspace " + quote(in.Workspace),
				Next: "Name a workspace by its id, name or path: `agenthub workspace list` shows them."}
		}
		f.WorkspaceID = id
	}
	runs, more, err := db.RunsPage(ctx, f)
	if err != nil {
		return RunsPage{}, err
	}
	return RunsPage{Runs: runs, More: more}, nil
}
