package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"errors"
	"fmt"
)

// FileStamp identifies one version of a file on disk without reading it:
// a file replaced by another (a new inode) or rewritten in place (a new
// status-change time, which no user call can set back) differs in it even
// when its size and modification time were kept.
type FileStamp struct {
	Path  string // resolved; stored only as its SHA-256
	Size  int64
	MTime int64 // ns since the epoch
	Inode uint64
	CTime int64 // ns since the epoch
}

func pathKey(path string) string {
	sum := sha256.Sum256([]byte(path))
	return hex.EncodeToString(sum[:])
}

// ProgramHash returns the recorded SHA-256 of the program at f.Path, or ""
// when none is recorded for exactly this stamp.
func (s *Store) ProgramHash(ctx context.Context, f FileStamp) (string, error) {
	var sum string
	err := s.r.QueryRowContext(ctx, `SELECT sha256 FROM program_hashes
		WHERE path_sha256 = ? AND size = ? AND mtime_ns = ? AND inode = ? AND ctime_ns = ?`,
		pathKey(f.Path), f.Size, f.MTime, int64(f.Inode), f.CTime).Scan(&sum)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("read a program's recorded hash: %w", err)
	}
	return sum, nil
}

// RememberProgramHash records sum as the SHA-256 of the program at f.Path
// while it keeps stamp f, replacing what was recorded for that path.
func (s *Store) RememberProgramHash(ctx context.Context, f FileStamp, sum string) error {
	_, err := s.Do(ctx, func(t *Tx) error {
		return t.Exec(`INSERT INTO program_hashes (path_sha256, size, mtime_ns, inode, ctime_ns, sha256, hashed_at)
			VALUES (?, ?, ?, ?, ?, ?, ?)
			ON CONFLICT (path_sha256) DO UPDATE SET size = excluded.size, mtime_ns = excluded.mtime_ns,
			inode = excluded.inode, ctime_ns = excluded.ctime_ns, sha256 = excluded.sha256,
			hashed_at = excluded.hashed_at`,
			pathKey(f.Path), f.Size, f.MTime, int64(f.Inode), f.CTime, sum, now())
	})
	if err != nil {
		return fmt.Errorf("record a program's hash: %w", err)
	}
	return nil
}
