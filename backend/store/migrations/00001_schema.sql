-- AgentHub schema, version 1. Every table is STRICT and every JSON column is
-- checked with json_valid. History tables (runs, events, messages, tool_calls,
-- approvals, decisions, patches, artifacts, checkpoints, audit, raw_lines) are
-- append-only or update-in-place; no migration, this one included, has a Down that
-- drops them, and no later migration may drop or truncate them.

-- +goose Up
CREATE TABLE workspaces (
    id           TEXT PRIMARY KEY,
    name         TEXT NOT NULL,
    path         TEXT NOT NULL, -- absolute root; never shown or exported
    display_path TEXT NOT NULL, -- home rewritten to ~
    added_at     TEXT NOT NULL,
    removed_at   TEXT           -- soft delete: runs keep their workspace
) STRICT;
CREATE UNIQUE INDEX workspaces_active_path ON workspaces(path) WHERE removed_at IS NULL;

CREATE TABLE settings (
    key   TEXT PRIMARY KEY,
    value TEXT NOT NULL
) STRICT;

CREATE TABLE sessions (
    id            TEXT PRIMARY KEY,
    workspace_id  TEXT NOT NULL REFERENCES workspaces(id),
    title         TEXT NOT NULL DEFAULT '',
    message_count INTEGER NOT NULL DEFAULT 0, -- expected count asserted by checkpoints (CK4)
    created_at    TEXT NOT NULL,
    deleted_at    TEXT
) STRICT;
CREATE INDEX sessions_workspace ON sessions(workspace_id, created_at);

CREATE TABLE runs (
    id                  TEXT PRIMARY KEY,
    session_id          TEXT NOT NULL REFERENCES sessions(id),
    workspace_id        TEXT NOT NULL REFERENCES workspaces(id),
    profile             TEXT NOT NULL,
    agent_id            TEXT NOT NULL,
    runtime             TEXT NOT NULL,
    runtime_version     TEXT NOT NULL DEFAULT '',
    task                TEXT NOT NULL,
    state               TEXT NOT NULL CHECK (state IN ('Created','Planned','Accepted','Preparing','Running',
                            'NeedsApproval','Applying','Completed','Failed','Cancelled')),
    done_reason         TEXT NOT NULL DEFAULT '',
    failure_code        TEXT NOT NULL DEFAULT '',
    failure_message     TEXT NOT NULL DEFAULT '',
    degraded            TEXT NOT NULL DEFAULT '',
    scripted            INTEGER NOT NULL DEFAULT 0,
    actor               TEXT NOT NULL DEFAULT '',
    surface             TEXT NOT NULL DEFAULT '',
    queue_seq           INTEGER NOT NULL, -- admission order, for FIFO re-enqueue after restart (SR12)
    parent_run_id       TEXT REFERENCES runs(id),
    parent_tool_call_id TEXT,
    plan                TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(plan)),  -- stop conditions, timeouts, executor
    stats               TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(stats)), -- steps, tokens, active time (SC4)
    last_seq            INTEGER NOT NULL DEFAULT 0,
    created_at          TEXT NOT NULL,
    updated_at          TEXT NOT NULL,
    last_event_at       TEXT NOT NULL,
    ended_at            TEXT
) STRICT;
CREATE INDEX runs_session ON runs(session_id, queue_seq);
CREATE INDEX runs_workspace ON runs(workspace_id, created_at);
CREATE INDEX runs_state ON runs(state, queue_seq);

CREATE TABLE events (
    pos            INTEGER PRIMARY KEY, -- global commit order, for the all-runs stream
    run_id         TEXT NOT NULL REFERENCES runs(id),
    seq            INTEGER NOT NULL CHECK (seq >= 1),
    id             TEXT NOT NULL,
    type           TEXT NOT NULL,
    session_id     TEXT NOT NULL,
    agent_id       TEXT NOT NULL,
    ts             TEXT NOT NULL,
    schema_version INTEGER NOT NULL,
    payload        TEXT NOT NULL CHECK (json_valid(payload))
) STRICT;
CREATE UNIQUE INDEX events_run_seq ON events(run_id, seq);

CREATE TABLE messages (
    id         TEXT PRIMARY KEY,
    session_id TEXT NOT NULL REFERENCES sessions(id),
    run_id     TEXT NOT NULL REFERENCES runs(id),
    position   INTEGER NOT NULL, -- 0-based within the session
    step       INTEGER NOT NULL,
    role       TEXT NOT NULL CHECK (role IN ('system','user','assistant','tool')),
    content    TEXT NOT NULL CHECK (json_valid(content)),
    created_at TEXT NOT NULL
) STRICT;
CREATE UNIQUE INDEX messages_session_position ON messages(session_id, position);
CREATE INDEX messages_run ON messages(run_id, position);

CREATE TABLE tool_calls (
    run_id            TEXT NOT NULL REFERENCES runs(id),
    id                TEXT NOT NULL,
    step              INTEGER NOT NULL,
    idx               INTEGER NOT NULL, -- order in the assistant message
    name              TEXT NOT NULL,
    arguments         TEXT NOT NULL, -- exactly as the model produced them (TC2)
    status            TEXT NOT NULL CHECK (status IN ('New','Running','Suspended','Resuming','Succeeded','Failed','Cancelled')),
    resume_mode       TEXT NOT NULL DEFAULT 'replay_tool_call',
    ticket_id         TEXT,
    suspension_reason TEXT NOT NULL DEFAULT '',
    resume_input      TEXT CHECK (resume_input IS NULL OR json_valid(resume_input)),
    subject_hash      TEXT NOT NULL DEFAULT '',
    result            TEXT CHECK (result IS NULL OR json_valid(result)),
    updated_at        TEXT NOT NULL,
    PRIMARY KEY (run_id, id)
) STRICT;
CREATE INDEX tool_calls_step ON tool_calls(run_id, step, idx);

CREATE TABLE approvals (
    id                TEXT PRIMARY KEY, -- the ticket id
    run_id            TEXT NOT NULL REFERENCES runs(id),
    tool_call_id      TEXT NOT NULL,
    ticket_kind       TEXT NOT NULL CHECK (ticket_kind IN ('approval','input')),
    kind              TEXT NOT NULL,
    title             TEXT NOT NULL,
    preview           TEXT NOT NULL CHECK (json_valid(preview)),
    risk              TEXT NOT NULL,
    subject           TEXT NOT NULL CHECK (json_valid(subject)),
    subject_hash      TEXT NOT NULL,
    base_commit       TEXT NOT NULL DEFAULT '',
    policy_trace      TEXT NOT NULL CHECK (json_valid(policy_trace)),
    enforcement       TEXT NOT NULL,
    decisions_offered TEXT NOT NULL CHECK (json_valid(decisions_offered)),
    grant_preview     TEXT NOT NULL DEFAULT '',
    resume_mode       TEXT NOT NULL DEFAULT 'replay_tool_call',
    status            TEXT NOT NULL CHECK (status IN ('pending','resolved','closed')),
    created_at        TEXT NOT NULL,
    resolved_at       TEXT
) STRICT;
CREATE INDEX approvals_status ON approvals(status, created_at);
CREATE INDEX approvals_run ON approvals(run_id, created_at);

CREATE TABLE decisions (
    id           TEXT PRIMARY KEY, -- decisionId
    approval_id  TEXT NOT NULL UNIQUE REFERENCES approvals(id), -- the first committed decision wins (AP7)
    run_id       TEXT NOT NULL REFERENCES runs(id),
    tool_call_id TEXT NOT NULL,
    kind         TEXT NOT NULL,
    subject_hash TEXT NOT NULL,
    reason       TEXT NOT NULL DEFAULT '',
    hunks        TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(hunks)),
    payload      TEXT NOT NULL DEFAULT 'null' CHECK (json_valid(payload)), -- resume input
    actor        TEXT NOT NULL,
    surface      TEXT NOT NULL,
    outcome      TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(outcome)),
    created_at   TEXT NOT NULL
) STRICT;
CREATE INDEX decisions_call ON decisions(tool_call_id, id);

CREATE TABLE grants (
    id           TEXT PRIMARY KEY,
    scope        TEXT NOT NULL CHECK (scope IN ('run','workspace')),
    run_id       TEXT REFERENCES runs(id),
    workspace_id TEXT REFERENCES workspaces(id),
    decision_id  TEXT REFERENCES decisions(id),
    kind         TEXT NOT NULL,
    tool         TEXT NOT NULL,
    pattern      TEXT NOT NULL,
    created_at   TEXT NOT NULL,
    revoked_at   TEXT
) STRICT;
CREATE INDEX grants_run ON grants(run_id);
CREATE INDEX grants_workspace ON grants(workspace_id);

CREATE TABLE patches (
    id           TEXT PRIMARY KEY,
    run_id       TEXT NOT NULL REFERENCES runs(id),
    tool_call_id TEXT NOT NULL,
    approval_id  TEXT REFERENCES approvals(id),
    status       TEXT NOT NULL CHECK (status IN ('proposed','applied','rejected','partial')),
    patch_sha256 TEXT NOT NULL,
    files        TEXT NOT NULL CHECK (json_valid(files)), -- [{path, preimage, postimage}]
    hunks        TEXT NOT NULL DEFAULT '[]' CHECK (json_valid(hunks)),
    created_at   TEXT NOT NULL,
    updated_at   TEXT NOT NULL
) STRICT;
CREATE INDEX patches_run ON patches(run_id, created_at);

CREATE TABLE artifacts (
    id         TEXT PRIMARY KEY,
    run_id     TEXT NOT NULL REFERENCES runs(id),
    kind       TEXT NOT NULL,
    path       TEXT NOT NULL, -- workspace-relative
    meta       TEXT NOT NULL DEFAULT '{}' CHECK (json_valid(meta)),
    created_at TEXT NOT NULL
) STRICT;
CREATE INDEX artifacts_run ON artifacts(run_id, created_at);

CREATE TABLE checkpoints (
    id         TEXT PRIMARY KEY,
    run_id     TEXT NOT NULL REFERENCES runs(id),
    kind       TEXT NOT NULL CHECK (kind IN ('step','suspension','final','workspace')),
    step       INTEGER NOT NULL,
    version    INTEGER NOT NULL, -- per run, +1 per checkpoint
    state      TEXT NOT NULL CHECK (json_valid(state)),
    created_at TEXT NOT NULL
) STRICT;
CREATE UNIQUE INDEX checkpoints_run_version ON checkpoints(run_id, version);

CREATE TABLE state_keys (
    scope    TEXT NOT NULL CHECK (scope IN ('session','run')),
    owner_id TEXT NOT NULL,
    key      TEXT NOT NULL,
    value    TEXT NOT NULL CHECK (json_valid(value)),
    PRIMARY KEY (scope, owner_id, key)
) STRICT;

CREATE TABLE audit (
    seq          INTEGER PRIMARY KEY, -- global, contiguous from 1
    at           TEXT NOT NULL,
    actor        TEXT NOT NULL,
    surface      TEXT NOT NULL,
    kind         TEXT NOT NULL,
    run_id       TEXT NOT NULL DEFAULT '',
    tool_call_id TEXT NOT NULL DEFAULT '',
    subject_hash TEXT NOT NULL DEFAULT '',
    data         TEXT NOT NULL CHECK (json_valid(data)),
    prev_hash    TEXT NOT NULL,
    hash         TEXT NOT NULL
) STRICT;
CREATE INDEX audit_run ON audit(run_id, seq);

CREATE TABLE raw_lines (
    run_id     TEXT NOT NULL REFERENCES runs(id),
    seq        INTEGER NOT NULL, -- the event sequence the line was normalised into (EV12)
    n          INTEGER NOT NULL,
    stream     TEXT NOT NULL,
    line       TEXT NOT NULL, -- redacted before insert
    created_at TEXT NOT NULL,
    PRIMARY KEY (run_id, seq, n)
) STRICT;
