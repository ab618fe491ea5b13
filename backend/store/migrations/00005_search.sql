-- Full-text search over every run (issue 19), with SQLite's FTS5: the build
-- must carry the sqlite_fts5 tag (the store refuses to open without it, see
-- search_fts5.go). One row per indexed event, its rowid the event's pos: the
-- text of every string in the payload (task, message text, tool arguments and
-- output, commands, paths, approval titles and reasons), which the store has
-- already redacted. Streamed deltas are left out: their text arrives whole in
-- run.message.completed and run.tool.result, and they are most of the
-- ingestion (indexing them would cost the run, see docs/PERFORMANCE.md).
-- The triggers index in the committer's own transaction, so the index never
-- lags and a rolled-back job leaves nothing behind. The store backed the file
-- up before this migration; it indexes the events already stored. Like 00001,
-- no Down: search_text is derived, but dropping it would break search.

-- +goose Up
CREATE VIRTUAL TABLE search_text USING fts5(body, tokenize = 'unicode61 remove_diacritics 2');

-- +goose StatementBegin
CREATE TRIGGER search_text_insert AFTER INSERT ON events
WHEN new.type NOT IN ('run.message.delta', 'run.tool.delta', 'run.checkpoint.created', 'run.status.changed',
    'run.context.compacted', 'runtime.started')
BEGIN
    INSERT INTO search_text (rowid, body)
    SELECT new.pos, substr(group_concat(value, ' '), 1, 65536) FROM json_tree(new.payload)
    WHERE type = 'text' AND key NOT IN ('id', 'messageId', 'toolCallId', 'approvalId', 'decisionId', 'checkpointId',
        'subjectHash', 'preimage', 'postimage', 'runId', 'sessionId', 'agentId')
    HAVING count(*) > 0;
END;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE TRIGGER search_text_delete AFTER DELETE ON events
BEGIN
    DELETE FROM search_text WHERE rowid = old.pos;
END;
-- +goose StatementEnd

INSERT INTO search_text (rowid, body)
SELECT e.pos, (SELECT substr(group_concat(value, ' '), 1, 65536) FROM json_tree(e.payload)
    WHERE type = 'text' AND key NOT IN ('id', 'messageId', 'toolCallId', 'approvalId', 'decisionId', 'checkpointId',
        'subjectHash', 'preimage', 'postimage', 'runId', 'sessionId', 'agentId'))
FROM events e
WHERE e.type NOT IN ('run.message.delta', 'run.tool.delta', 'run.checkpoint.created', 'run.status.changed',
    'run.context.compacted', 'runtime.started')
  AND EXISTS (SELECT 1 FROM json_tree(e.payload) WHERE type = 'text');
