-- The SHA-256 of each agent CLI program a run started (AD4), kept between
-- processes: a native CLI is several hundred megabytes (0.6 s to hash the
-- 381 MB Claude Code binary), and every `agenthub run` is a new process.
-- A row is valid only while the file still has the same size, modification
-- time, inode and status-change time; any of them differing means the file
-- was replaced or rewritten and is hashed again. The program is named by
-- the SHA-256 of its resolved path, never by the path itself (no absolute
-- machine path is persisted). Like 00001, no Down (a test forbids dropping tables).

-- +goose Up
CREATE TABLE program_hashes (
    path_sha256 TEXT PRIMARY KEY,
    size        INTEGER NOT NULL,
    mtime_ns    INTEGER NOT NULL,
    inode       INTEGER NOT NULL,
    ctime_ns    INTEGER NOT NULL,
    sha256      TEXT NOT NULL,
    hashed_at   TEXT NOT NULL
) STRICT;
