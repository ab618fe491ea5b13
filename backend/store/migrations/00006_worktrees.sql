-- A run isolated in its own git worktree (docs/TOOLS.md, "Worktree runs"):
-- the branch it works on, the commit it started from and what became of it.
-- The worktree's directory is derived from the data directory and the run
-- id, never stored: no absolute machine path is persisted. A row is written
-- before the run may start, so a run's root never falls back to the checkout.
-- Like 00001, no Down: worktree rows are history.

-- +goose Up
CREATE TABLE worktrees (
    run_id       TEXT PRIMARY KEY,
    workspace_id TEXT NOT NULL,
    branch       TEXT NOT NULL,
    base         TEXT NOT NULL, -- the commit hash the branch started from
    state        TEXT NOT NULL CHECK (state IN ('active','kept','merged','discarded')),
    outcome      TEXT NOT NULL DEFAULT '', -- what the last merge, keep or discard did
    created_at   TEXT NOT NULL,
    closed_at    TEXT
) STRICT;
CREATE INDEX worktrees_workspace ON worktrees(workspace_id, state);
