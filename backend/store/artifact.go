package store

import (
	"context"
	"crypto/sha256"
	"database/sql"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"agenthub/backend"
)

// ScanArtifact checks d and redacts it as PutArtifact would, outside the
// committer: scanning 16 MiB takes most of a second, which must not hold
// every other run's writes. PutArtifact then only checks that the content
// is what was scanned (by its hash) instead of scanning it again.
func (s *Store) ScanArtifact(d backend.ArtifactDraft) (backend.ArtifactDraft, error) {
	d, err := checkArtifact(&s.red, d)
	if err != nil {
		return d, err
	}
	sum := sha256.Sum256(d.Content)
	s.scanned.Store(hex.EncodeToString(sum[:]), true)
	return d, nil
}

// checkArtifact validates d and redacts it: text kinds in place
// (Meta.Redacted says so); a binary kind whose bytes hold a secret is
// refused with artifact_secret, since replacing bytes would break an image.
func checkArtifact(red *redactorSlot, d backend.ArtifactDraft) (backend.ArtifactDraft, error) {
	if !d.Kind.Valid() {
		return d, backend.Errorf(backend.CodeInvalidInput, "unknown artifact kind %q", d.Kind)
	}
	if len(d.Content) > backend.MaxArtifactBytes {
		return d, backend.Errorf(backend.CodeArtifactTooLarge,
			"the artifact is %d bytes; the limit is %d", len(d.Content), backend.MaxArtifactBytes)
	}
	if raw := string(d.Content); d.Kind.Text() {
		if r := red.text(raw); r != raw {
			d.Content, d.Meta.Redacted = []byte(r), true
		}
	} else if red.text(raw) != raw {
		return d, backend.Errorf(backend.CodeArtifactSecret,
			"%s holds what looks like a secret; binary content cannot be redacted, so it was not stored", d.Kind)
	}
	return d, nil
}

// PutArtifact stores d as an artifact of the run and appends the event that
// announces it (run.artifact.ready or run.preview.ready, by kind), in this
// transaction: the artifact exists exactly when its event does. Content
// ScanArtifact did not see (by hash) is checked here (checkArtifact). The
// blob is keyed by the sha256 of what is stored.
func (t *Tx) PutArtifact(runID string, d backend.ArtifactDraft) (backend.Artifact, error) {
	sum := sha256.Sum256(d.Content)
	if _, ok := t.s.scanned.LoadAndDelete(hex.EncodeToString(sum[:])); !ok || !d.Kind.Valid() {
		var err error
		if d, err = checkArtifact(&t.s.red, d); err != nil {
			return backend.Artifact{}, err
		}
		sum = sha256.Sum256(d.Content)
	}
	content := d.Content
	var ws string
	if err := t.tx.QueryRowContext(t.ctx, `SELECT workspace_id FROM runs WHERE id = ?`, runID).Scan(&ws); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return backend.Artifact{}, &backend.NotFound{Kind: "run", ID: runID}
		}
		return backend.Artifact{}, fmt.Errorf("artifact of run %s: %w", runID, err)
	}
	a := backend.Artifact{ID: backend.NewID(backend.PrefixArtifact), RunID: runID, WorkspaceID: ws, Kind: d.Kind,
		Title: t.s.red.text(d.Title), Path: t.s.red.text(d.Path), MediaType: d.MediaType,
		SHA256: hex.EncodeToString(sum[:]), Size: int64(len(content)), Producer: d.Producer, CallID: d.CallID,
		Meta: d.Meta, CreatedAt: now()}
	if a.Title == "" {
		a.Title = a.Path
	}
	if err := t.Exec(`INSERT INTO artifact_blobs (sha256, size, data) VALUES (?,?,?) ON CONFLICT DO NOTHING`,
		a.SHA256, a.Size, content); err != nil {
		return backend.Artifact{}, fmt.Errorf("store artifact blob: %w", err)
	}
	ev, err := t.Append(runID, d.Kind.Event(), a)
	if err != nil {
		return backend.Artifact{}, err
	}
	a.Sequence = ev.Sequence
	meta, err := json.Marshal(a.Meta)
	if err != nil {
		return backend.Artifact{}, fmt.Errorf("encode artifact meta: %w", err)
	}
	if err := t.Exec(`INSERT INTO artifacts (id, run_id, workspace_id, kind, title, path, media_type, sha256, size,
		producer, call_id, meta, seq, created_at) VALUES (?,?,?,?,?,?,?,?,?,?,?,?,?,?)`, a.ID, a.RunID, a.WorkspaceID,
		string(a.Kind), a.Title, a.Path, a.MediaType, a.SHA256, a.Size, a.Producer, a.CallID, string(meta),
		a.Sequence, a.CreatedAt); err != nil {
		return backend.Artifact{}, fmt.Errorf("store artifact %s: %w", a.ID, err)
	}
	return a, nil
}

// ArtifactFilter narrows Artifacts; empty fields match everything. From and
// To compare with the creation time (backend.TimeFormat, To exclusive).
type ArtifactFilter struct {
	RunID       string
	WorkspaceID string
	Kind        backend.ArtifactKind
	From, To    string
	Limit       int // default and cap 1,000
}

const artifactSelect = `SELECT id, run_id, workspace_id, kind, title, path, media_type, sha256, size, producer,
	call_id, meta, seq, created_at FROM artifacts`

// Artifacts lists artifacts, newest first.
func (s *Store) Artifacts(ctx context.Context, f ArtifactFilter) ([]backend.Artifact, error) {
	var where []string
	var args []any
	add := func(cond, v string) {
		if v != "" {
			where = append(where, cond)
			args = append(args, v)
		}
	}
	add("run_id = ?", f.RunID)
	add("workspace_id = ?", f.WorkspaceID)
	add("kind = ?", string(f.Kind))
	add("created_at >= ?", f.From)
	add("created_at < ?", f.To)
	q := artifactSelect
	if len(where) > 0 {
		q += " WHERE " + strings.Join(where, " AND ")
	}
	if f.Limit <= 0 || f.Limit > 1000 {
		f.Limit = 1000
	}
	q += " ORDER BY created_at DESC, rowid DESC LIMIT ?"
	args = append(args, f.Limit)
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("list artifacts: %w", err)
	}
	defer rows.Close()
	out := []backend.Artifact{}
	for rows.Next() {
		a, err := scanArtifact(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, a)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("list artifacts: %w", err)
	}
	return out, nil
}

// Artifact returns one artifact's record, or a NotFound.
func (s *Store) Artifact(ctx context.Context, id string) (backend.Artifact, error) {
	a, err := scanArtifact(s.r.QueryRowContext(ctx, artifactSelect+` WHERE id = ?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return a, &backend.NotFound{Kind: "artifact", ID: id}
	}
	return a, err
}

// ArtifactContent returns an artifact and its bytes, checked against the
// hash that names them: a damaged blob is store_corrupt, never shown.
func (s *Store) ArtifactContent(ctx context.Context, id string) (backend.Artifact, []byte, error) {
	a, err := s.Artifact(ctx, id)
	if err != nil {
		return a, nil, err
	}
	var data []byte
	if err := s.r.QueryRowContext(ctx, `SELECT data FROM artifact_blobs WHERE sha256 = ?`, a.SHA256).
		Scan(&data); err != nil {
		return a, nil, fmt.Errorf("read the content of artifact %s: %w", id, err)
	}
	if sum := sha256.Sum256(data); hex.EncodeToString(sum[:]) != a.SHA256 {
		return a, nil, backend.Errorf(backend.CodeStoreCorrupt, "the content of artifact %s does not match its hash", id)
	}
	return a, data, nil
}

// SetArtifactPrivacy records the privacy review of a screenshot.
func (t *Tx) SetArtifactPrivacy(id, state string) error {
	if state != backend.PrivacyPending && state != backend.PrivacyApproved {
		return backend.Errorf(backend.CodeInvalidInput, "privacy state %q is neither pending nor approved", state)
	}
	if err := t.Exec(`UPDATE artifacts SET meta = json_set(meta, '$.privacy', ?) WHERE id = ?`, state, id); err != nil {
		return fmt.Errorf("review artifact %s: %w", id, err)
	}
	return nil
}

type rowScanner interface{ Scan(dest ...any) error }

func scanArtifact(r rowScanner) (backend.Artifact, error) {
	var a backend.Artifact
	var kind, meta string
	if err := r.Scan(&a.ID, &a.RunID, &a.WorkspaceID, &kind, &a.Title, &a.Path, &a.MediaType, &a.SHA256, &a.Size,
		&a.Producer, &a.CallID, &meta, &a.Sequence, &a.CreatedAt); err != nil {
		if errors.Is(err, sql.ErrNoRows) {
			return a, err
		}
		return a, fmt.Errorf("read artifact: %w", err)
	}
	a.Kind = backend.ArtifactKind(kind)
	if err := json.Unmarshal([]byte(meta), &a.Meta); err != nil {
		return a, fmt.Errorf("read artifact %s meta: %w", a.ID, err)
	}
	return a, nil
}
