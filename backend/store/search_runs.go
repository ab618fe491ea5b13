package store

import (
	"context"
	"fmt"
	"strings"

	"agenthub/backend"
)

// The runs list of issue 19: newest first, a page at a time (thousands of
// runs), with what tells runs of the same task apart and the resume links
// both ways (migration 00008).

// RunPageFilter selects a page of runs; zero fields match everything.
// Before is the cursor: the Cursor of the last run of the previous page.
type RunPageFilter struct {
	WorkspaceID string
	States      []backend.RunState
	Before      int64
	Limit       int // default 100, at most 1,000
}

// RunListItem is one run of the list.
type RunListItem struct {
	ID               string           `json:"id"`
	Task             string           `json:"task"`
	State            backend.RunState `json:"state"`
	WorkspaceID      string           `json:"workspaceId"`
	WorkspaceName    string           `json:"workspaceName"`
	Profile          string           `json:"profile"`
	CreatedAt        string           `json:"createdAt"`
	LastEventAt      string           `json:"lastEventAt"`
	PendingApprovals int              `json:"pendingApprovals"`
	ResumedFrom      string           `json:"resumedFrom,omitempty"` // the run this one continues
	ResumedBy        string           `json:"resumedBy,omitempty"`   // the run that continues this one
	Imported         bool             `json:"imported,omitempty"`    // read-only, from a bundle
	Cursor           int64            `json:"cursor"`                // pass as Before for the next page
}

// RunsPage returns one page of runs, newest first, and whether more follow.
func (s *Store) RunsPage(ctx context.Context, f RunPageFilter) ([]RunListItem, bool, error) {
	where, args := []string{"1 = 1"}, []any{}
	if f.WorkspaceID != "" {
		where, args = append(where, "r.workspace_id = ?"), append(args, f.WorkspaceID)
	}
	if len(f.States) > 0 {
		where = append(where, "r.state IN (?"+strings.Repeat(",?", len(f.States)-1)+")")
		for _, st := range f.States {
			args = append(args, string(st))
		}
	}
	if f.Before > 0 {
		where, args = append(where, "r.queue_seq < ?"), append(args, f.Before)
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 100
	}
	limit = min(limit, 1000)
	rows, err := s.r.QueryContext(ctx, `SELECT r.id, r.task, r.state, r.workspace_id, coalesce(w.name, ''), r.profile,
		r.created_at, r.last_event_at, r.queue_seq, r.resumed_from, r.resumed_by,
		json_extract(r.plan, '$.imported') IS NOT NULL,
		(SELECT count(*) FROM approvals a WHERE a.run_id = r.id AND a.status = 'pending')
		FROM runs r LEFT JOIN workspaces w ON w.id = r.workspace_id
		WHERE `+strings.Join(where, " AND ")+` ORDER BY r.queue_seq DESC LIMIT ?`, append(args, limit+1)...)
	if err != nil {
		return nil, false, fmt.Errorf("list runs: %w", err)
	}
	defer rows.Close()
	out := make([]RunListItem, 0, limit)
	for rows.Next() {
		var r RunListItem
		if err := rows.Scan(&r.ID, &r.Task, &r.State, &r.WorkspaceID, &r.WorkspaceName, &r.Profile, &r.CreatedAt,
			&r.LastEventAt, &r.Cursor, &r.ResumedFrom, &r.ResumedBy, &r.Imported, &r.PendingApprovals); err != nil {
			return nil, false, fmt.Errorf("list runs: %w", err)
		}
		out = append(out, r)
	}
	if err := rows.Err(); err != nil {
		return nil, false, fmt.Errorf("list runs: %w", err)
	}
	more := len(out) > limit
	if more {
		out = out[:limit]
	}
	return out, more, nil
}
