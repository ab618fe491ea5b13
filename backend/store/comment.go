package store

import (
	"context"
	"database/sql"
	"fmt"
	"strings"

	"agenthub/backend"
)

// MaxCommentBytes bounds one review comment's text.
const MaxCommentBytes = 8 << 10

// AddComment stores a review comment. The caller checks that the approval
// or checkpoint it names belongs to the run; the store checks the shape.
func (t *Tx) AddComment(c backend.ReviewComment) error {
	switch {
	case c.ID == "" || c.RunID == "" || c.Path == "":
		return fmt.Errorf("add comment: id, run and path are required")
	case (c.ApprovalID == "") == (c.CheckpointID == ""):
		return fmt.Errorf("add comment %s: exactly one of approval and checkpoint", c.ID)
	case c.StartLine < 1 || c.EndLine < c.StartLine:
		return fmt.Errorf("add comment %s: lines %d-%d", c.ID, c.StartLine, c.EndLine)
	case strings.TrimSpace(c.Body) == "" || len(c.Body) > MaxCommentBytes:
		return fmt.Errorf("add comment %s: the text is empty or longer than %d bytes", c.ID, MaxCommentBytes)
	}
	if c.Side == "" {
		c.Side = "new"
	}
	body := t.s.red.text(c.Body)
	if err := t.Exec(`INSERT INTO review_comments (id, run_id, approval_id, checkpoint_id, path, start_line,
		end_line, side, body, actor, surface, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?)`, c.ID, c.RunID,
		c.ApprovalID, c.CheckpointID, c.Path, c.StartLine, c.EndLine, c.Side, body, c.Actor, string(c.Surface),
		c.CreatedAt); err != nil {
		return fmt.Errorf("add comment %s: %w", c.ID, err)
	}
	return nil
}

// DeliverComments marks the undelivered comments on an approval as
// delivered with a decision and returns them, oldest first. A comment is
// delivered once: a second call finds none.
func (t *Tx) DeliverComments(approvalID, decisionID string) ([]backend.ReviewComment, error) {
	rows, err := t.tx.QueryContext(t.ctx, commentSelect+` WHERE approval_id = ? AND delivered_in = ''
		ORDER BY created_at, id`, approvalID)
	if err != nil {
		return nil, fmt.Errorf("comments of %s: %w", approvalID, err)
	}
	list, err := scanComments(rows)
	if err != nil || len(list) == 0 {
		return list, err
	}
	if err := t.Exec(`UPDATE review_comments SET delivered_in = ? WHERE approval_id = ? AND delivered_in = ''`,
		decisionID, approvalID); err != nil {
		return nil, fmt.Errorf("deliver the comments of %s: %w", approvalID, err)
	}
	for i := range list {
		list[i].DeliveredIn = decisionID
	}
	return list, nil
}

// CommentsDelivered returns the comments a decision delivered.
func (s *Store) CommentsDelivered(ctx context.Context, decisionID string) ([]backend.ReviewComment, error) {
	rows, err := s.r.QueryContext(ctx, commentSelect+` WHERE delivered_in = ? ORDER BY created_at, id`, decisionID)
	if err != nil {
		return nil, fmt.Errorf("comments of decision %s: %w", decisionID, err)
	}
	return scanComments(rows)
}

// RunComments returns a run's review comments, oldest first.
func (s *Store) RunComments(ctx context.Context, runID string) ([]backend.ReviewComment, error) {
	rows, err := s.r.QueryContext(ctx, commentSelect+` WHERE run_id = ? ORDER BY created_at, id`, runID)
	if err != nil {
		return nil, fmt.Errorf("comments of run %s: %w", runID, err)
	}
	return scanComments(rows)
}

const commentSelect = `SELECT id, run_id, approval_id, checkpoint_id, path, start_line, end_line, side, body, actor,
	surface, created_at, delivered_in FROM review_comments`

func scanComments(rows *sql.Rows) ([]backend.ReviewComment, error) {
	defer rows.Close()
	out := []backend.ReviewComment{}
	for rows.Next() {
		var c backend.ReviewComment
		var surface string
		if err := rows.Scan(&c.ID, &c.RunID, &c.ApprovalID, &c.CheckpointID, &c.Path, &c.StartLine, &c.EndLine,
			&c.Side, &c.Body, &c.Actor, &surface, &c.CreatedAt, &c.DeliveredIn); err != nil {
			return nil, fmt.Errorf("read comment: %w", err)
		}
		c.Surface = backend.Surface(surface)
		out = append(out, c)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read comments: %w", err)
	}
	return out, nil
}

// DeliverSessionComments marks the undelivered comments on applied changes
// of a session's earlier runs as delivered with runID, the session's next
// run, whose first message carries them, and returns them, oldest first.
func (t *Tx) DeliverSessionComments(sessionID, runID string) ([]backend.ReviewComment, error) {
	const where = ` WHERE checkpoint_id <> '' AND delivered_in = '' AND run_id <> ?
		AND run_id IN (SELECT id FROM runs WHERE session_id = ?)`
	rows, err := t.tx.QueryContext(t.ctx, commentSelect+where+` ORDER BY created_at, id`, runID, sessionID)
	if err != nil {
		return nil, fmt.Errorf("comments of session %s: %w", sessionID, err)
	}
	list, err := scanComments(rows)
	if err != nil || len(list) == 0 {
		return list, err
	}
	if err := t.Exec(`UPDATE review_comments SET delivered_in = ?`+where, runID, runID, sessionID); err != nil {
		return nil, fmt.Errorf("deliver the comments of session %s: %w", sessionID, err)
	}
	for i := range list {
		list[i].DeliveredIn = runID
	}
	return list, nil
}
