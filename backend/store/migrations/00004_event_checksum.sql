-- Every event row carries a checksum of its columns (CRC-32C, computed by the
-- committer, checked on every read), so a damaged row is reported as
-- store_corrupt instead of served. Rows written before this migration have
-- NULL and are served unchecked. Like 00001, no Down: events is a history table.

-- +goose Up
ALTER TABLE events ADD COLUMN sum INTEGER;
