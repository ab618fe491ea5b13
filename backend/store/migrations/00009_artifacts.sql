-- Artifacts (issue 18): documents, images, screenshots, HTML and file
-- previews, PDFs a run produced for review. 00001 reserved the artifacts
-- table; this gives it the contract's metadata and its content. Bytes are
-- content-addressed blobs (sha256 of what is stored: already path-scrubbed
-- and redacted), kept once however many artifacts name them; seq is the
-- sequence of the run.artifact.ready / run.preview.ready event that
-- announced the artifact. The kind is checked by the store (a column added
-- later cannot take a CHECK). Like 00001, no Down: artifacts are history.

-- +goose Up
CREATE TABLE artifact_blobs (
    sha256 TEXT PRIMARY KEY,
    size   INTEGER NOT NULL CHECK (size >= 0),
    data   BLOB NOT NULL
) STRICT;
ALTER TABLE artifacts ADD COLUMN workspace_id TEXT NOT NULL DEFAULT '';
ALTER TABLE artifacts ADD COLUMN title TEXT NOT NULL DEFAULT '';
ALTER TABLE artifacts ADD COLUMN media_type TEXT NOT NULL DEFAULT '';
ALTER TABLE artifacts ADD COLUMN sha256 TEXT NOT NULL DEFAULT '';
ALTER TABLE artifacts ADD COLUMN size INTEGER NOT NULL DEFAULT 0;
ALTER TABLE artifacts ADD COLUMN producer TEXT NOT NULL DEFAULT '';
ALTER TABLE artifacts ADD COLUMN call_id TEXT NOT NULL DEFAULT '';
ALTER TABLE artifacts ADD COLUMN seq INTEGER NOT NULL DEFAULT 0;
CREATE INDEX artifacts_created ON artifacts(created_at);
CREATE INDEX artifacts_workspace ON artifacts(workspace_id, created_at);
