-- Full-text search over every run (issue 19), with SQLite's FTS5: the build
-- must carry the sqlite_fts5 tag (the store refuses to open without it, see
-- search.go). One row per indexed event, its rowid the event's pos: the text
-- of every string in the payload (task, message text, tool arguments and
-- output, commands, paths, approval titles and reasons), which the store has
-- already redacted. Streamed deltas are left out: their text arrives whole in
-- run.message.completed and run.tool.result.
-- Events are indexed right behind the commits, by the committer while no job
-- waits (search_index.go), so indexing never delays a run: an FTS5 insert in
-- the committer's transaction cost 40 % of the delta ingestion rate and 90 %
-- of the message rate (docs/PERFORMANCE.md). The setting search.indexed_pos is
-- the last event pos the index has seen. The store backed the file up before
-- this migration; it indexes the events already stored. Like 00001, no Down:
-- search_text is derived, but dropping it would break search.

-- +goose Up
CREATE VIRTUAL TABLE search_text USING fts5(body, tokenize = 'unicode61 remove_diacritics 2');

-- An event removed after its commit takes its index row along (no code
-- removes a committed event today; a reused pos must never show another
-- event's text).
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

INSERT INTO settings (key, value) SELECT 'search.indexed_pos', CAST(coalesce(max(pos), 0) AS TEXT) FROM events;
