-- Review comments (issue 18): a reviewer's comment on a line or a range of
-- lines of a proposed change (approval_id) or an applied one (checkpoint_id).
-- A proposal's comments go back to the agent with the decision on it: the
-- decision's id is then written in delivered_in, so a comment is delivered
-- once. No search index (the timeline and the audit carry them). Like 00001,
-- no Down: comments are history.

-- +goose Up
CREATE TABLE review_comments (
    id            TEXT PRIMARY KEY,
    run_id        TEXT NOT NULL REFERENCES runs(id),
    approval_id   TEXT NOT NULL DEFAULT '',
    checkpoint_id TEXT NOT NULL DEFAULT '',
    path          TEXT NOT NULL,
    start_line    INTEGER NOT NULL CHECK (start_line >= 1),
    end_line      INTEGER NOT NULL CHECK (end_line >= start_line),
    side          TEXT NOT NULL CHECK (side IN ('old','new')),
    body          TEXT NOT NULL,
    actor         TEXT NOT NULL,
    surface       TEXT NOT NULL,
    created_at    TEXT NOT NULL,
    delivered_in  TEXT NOT NULL DEFAULT '',
    CHECK ((approval_id = '') <> (checkpoint_id = ''))
) STRICT;
CREATE INDEX review_comments_run ON review_comments(run_id, created_at);
CREATE INDEX review_comments_approval ON review_comments(approval_id) WHERE approval_id <> '';
