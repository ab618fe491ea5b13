package store

import (
	"context"
	"fmt"
)

// SQLiteVersion reports the linked SQLite library's version, for doctor.
func (s *Store) SQLiteVersion(ctx context.Context) (string, error) {
	var v string
	if err := s.r.QueryRowContext(ctx, "SELECT sqlite_version()").Scan(&v); err != nil {
		return "", fmt.Errorf("query sqlite_version: %w", err)
	}
	return v, nil
}
