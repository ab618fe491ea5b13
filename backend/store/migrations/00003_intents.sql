-- Intent before effect: every effect on a workspace (a patch apply, a
-- delete, an undo, a commit) is recorded here, committed, before the first
-- byte of it reaches the disk; the transaction that records its outcome
-- closes it. An intent still open at start is one the previous process did
-- not live to close: recovery compares its files with the disk (see
-- docs/RELIABILITY.md). Like 00001, no Down: intents are history.

-- +goose Up
CREATE TABLE intents (
    id           TEXT PRIMARY KEY, -- the checkpoint id of the effect
    run_id       TEXT NOT NULL DEFAULT '', -- '' for an effect outside a run (an undo)
    tool_call_id TEXT NOT NULL DEFAULT '',
    workspace_id TEXT NOT NULL,
    op           TEXT NOT NULL, -- write | undo
    undoes       TEXT NOT NULL DEFAULT '', -- for an undo: the checkpoint it restores
    files        TEXT NOT NULL CHECK (json_valid(files)),   -- [{path, before, after}]
    staging      TEXT NOT NULL CHECK (json_valid(staging)), -- workspace-relative staging files
    state        TEXT NOT NULL CHECK (state IN ('open','applied','not_applied','conflict','resolved')),
    outcome      TEXT NOT NULL DEFAULT '', -- why it was closed as it was
    created_at   TEXT NOT NULL,
    closed_at    TEXT
) STRICT;
CREATE INDEX intents_open ON intents(state) WHERE state IN ('open','conflict');
CREATE INDEX intents_run ON intents(run_id, created_at);
