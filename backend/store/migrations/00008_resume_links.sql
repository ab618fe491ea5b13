-- A run can be resumed once (issue 16): its continuation names it in
-- resumed_from, and it names its continuation in resumed_by, so both sides
-- show the link and a second resume is refused with run_already_resumed.
-- The unique index holds that rule even against two resumes racing.
-- Existing continuations are found from their run.created event; where a
-- run was resumed more than once before this migration, the first
-- continuation keeps the link. Like 00001, no Down: runs are history.

-- +goose Up
ALTER TABLE runs ADD COLUMN resumed_from TEXT NOT NULL DEFAULT '';
ALTER TABLE runs ADD COLUMN resumed_by TEXT NOT NULL DEFAULT '';
UPDATE runs SET resumed_from = coalesce((SELECT json_extract(e.payload, '$.resumedFrom') FROM events e
    WHERE e.run_id = runs.id AND e.type = 'run.created'), '');
UPDATE runs SET resumed_from = '' WHERE resumed_from <> '' AND queue_seq > (SELECT min(r2.queue_seq) FROM runs r2
    WHERE r2.resumed_from = runs.resumed_from);
UPDATE runs SET resumed_by = coalesce((SELECT r2.id FROM runs r2 WHERE r2.resumed_from = runs.id), '');
CREATE UNIQUE INDEX runs_resumed_from ON runs(resumed_from) WHERE resumed_from <> '';
