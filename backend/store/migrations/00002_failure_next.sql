-- The next step of a failure when the error named its own (backend.Error.Next);
-- empty means the failure code's default step (backend.Recovery). Like 00001,
-- no Down: runs is a history table.

-- +goose Up
ALTER TABLE runs ADD COLUMN failure_next TEXT NOT NULL DEFAULT '';
