package workspace

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"sort"
	"strings"
	"sync"
	"time"

	"agenthub/workspace/crashpoint"
)

// Absent is the pre- or post-image hash of a file that does not exist.
const Absent = "absent"

// DefaultCheckpointBytes bounds a checkpoint store unless the caller says
// otherwise.
const DefaultCheckpointBytes = 512 << 20

// CheckpointStore keeps the pre-images of every apply, content-addressed, in
// a directory of AgentHub's data dir (never in the user's repository), so an
// apply can be rolled back and undone. Its size is bounded: [CheckpointStore.GC]
// drops the oldest checkpoints first. Safe for concurrent use in one process.
type CheckpointStore struct {
	dir      string
	maxBytes int64
	mu       sync.Mutex
}

// Checkpoint is the manifest of one apply. Paths are workspace-relative; the
// workspace is identified by a hash of its root, never by the path itself.
type Checkpoint struct {
	ID        string           `json:"id"`
	Workspace string           `json:"workspace"`
	CreatedAt time.Time        `json:"created_at"`
	UndoneAt  *time.Time       `json:"undone_at,omitempty"`
	Files     []CheckpointFile `json:"files"`
}

// CheckpointFile records one file of an apply: its hash before (the stored
// pre-image) and after, and its mode before.
type CheckpointFile struct {
	Path      string      `json:"path"`
	Preimage  string      `json:"preimage"`  // SHA-256 hex or "absent"
	Postimage string      `json:"postimage"` // SHA-256 hex or "absent"
	Mode      fs.FileMode `json:"mode,omitempty"`
}

var (
	checkpointID = regexp.MustCompile(`^ck_[0-9a-f]{24}$`)
	blobName     = regexp.MustCompile(`^[0-9a-f]{64}$`)
)

// NewCheckpointStore opens (creating it if needed) a store in dir, bounded to
// maxBytes (DefaultCheckpointBytes when <= 0).
func NewCheckpointStore(dir string, maxBytes int64) (*CheckpointStore, error) {
	if maxBytes <= 0 {
		maxBytes = DefaultCheckpointBytes
	}
	for _, sub := range []string{"blobs", "checkpoints"} {
		if err := os.MkdirAll(filepath.Join(dir, sub), 0o700); err != nil {
			return nil, fmt.Errorf("open checkpoint store: %w", err)
		}
	}
	return &CheckpointStore{dir: dir, maxBytes: maxBytes}, nil
}

// Hash returns the SHA-256 hex of data, the form every pre- and post-image
// hash takes.
func Hash(data []byte) string {
	s := sha256.Sum256(data)
	return hex.EncodeToString(s[:])
}

func newCheckpointID(now time.Time) string {
	var r [4]byte
	_, _ = rand.Read(r[:])
	return fmt.Sprintf("ck_%016x%s", now.UnixNano(), hex.EncodeToString(r[:]))
}

// record stores the pre-images and writes the manifest, before any file of
// the apply is touched (CK6).
func (s *CheckpointStore) record(ck *Checkpoint, pre map[string][]byte) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, f := range ck.Files {
		if f.Preimage == Absent {
			continue
		}
		if err := s.putBlob(f.Preimage, pre[f.Path]); err != nil {
			return fmt.Errorf("checkpoint %s: store pre-image of %s: %w", ck.ID, f.Path, err)
		}
	}
	return s.save(ck)
}

func (s *CheckpointStore) blobPath(sum string) string {
	return filepath.Join(s.dir, "blobs", sum[:2], sum)
}

func (s *CheckpointStore) putBlob(sum string, data []byte) error {
	p := s.blobPath(sum)
	if _, err := os.Stat(p); err == nil {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(p), 0o700); err != nil {
		return err
	}
	return WriteFileAtomic(p, data)
}

// Blob returns a stored pre-image, verifying its hash.
func (s *CheckpointStore) Blob(sum string) ([]byte, error) {
	if !blobName.MatchString(sum) {
		return nil, fmt.Errorf("blob %q: malformed hash: %w", sum, ErrCheckpoint)
	}
	data, err := os.ReadFile(s.blobPath(sum))
	if err != nil {
		return nil, fmt.Errorf("blob %s: %w", sum[:12], errors.Join(ErrCheckpoint, err))
	}
	if Hash(data) != sum {
		return nil, fmt.Errorf("blob %s: content does not match its hash: %w", sum[:12], ErrCheckpoint)
	}
	return data, nil
}

func (s *CheckpointStore) save(ck *Checkpoint) error {
	data, err := json.MarshalIndent(ck, "", "  ")
	if err != nil {
		return fmt.Errorf("checkpoint %s: %w", ck.ID, err)
	}
	if err := WriteFileAtomic(filepath.Join(s.dir, "checkpoints", ck.ID+".json"), data); err != nil {
		return fmt.Errorf("checkpoint %s: %w", ck.ID, err)
	}
	return nil
}

// Load reads one checkpoint manifest.
func (s *CheckpointStore) Load(id string) (Checkpoint, error) {
	if !checkpointID.MatchString(id) {
		return Checkpoint{}, fmt.Errorf("checkpoint %q: malformed id: %w", id, ErrCheckpoint)
	}
	data, err := os.ReadFile(filepath.Join(s.dir, "checkpoints", id+".json"))
	if err != nil {
		return Checkpoint{}, fmt.Errorf("checkpoint %s: %w", id, errors.Join(ErrCheckpoint, err))
	}
	var ck Checkpoint
	if err := json.Unmarshal(data, &ck); err != nil || ck.ID != id {
		return Checkpoint{}, fmt.Errorf("checkpoint %s: corrupt manifest: %w", id, ErrCheckpoint)
	}
	return ck, nil
}

// List returns every checkpoint, oldest first.
func (s *CheckpointStore) List() ([]Checkpoint, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.list()
}

func (s *CheckpointStore) list() ([]Checkpoint, error) {
	des, err := os.ReadDir(filepath.Join(s.dir, "checkpoints"))
	if err != nil {
		return nil, fmt.Errorf("list checkpoints: %w", err)
	}
	var out []Checkpoint
	for _, de := range des {
		id, ok := strings.CutSuffix(de.Name(), ".json")
		if !ok || !checkpointID.MatchString(id) {
			continue
		}
		ck, err := s.Load(id)
		if err != nil {
			continue // a torn or foreign file is not a checkpoint
		}
		out = append(out, ck)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

// WriteFileAtomic writes a file whole or not at all, mode 0600: temp +
// fsync + rename + fsync of the directory.
func WriteFileAtomic(path string, data []byte) error {
	dir := filepath.Dir(path)
	if err := crashpoint.Hit("atomic.create"); err != nil {
		return err
	}
	f, err := os.CreateTemp(dir, ".tmp-*")
	if err != nil {
		return err
	}
	tmp := f.Name()
	if err := crashpoint.Hit("atomic.write"); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		os.Remove(tmp)
		return err
	}
	if err := f.Close(); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := crashpoint.Hit("atomic.rename"); err != nil {
		os.Remove(tmp)
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		os.Remove(tmp)
		return err
	}
	return syncDir(dir)
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	defer d.Close()
	// Windows cannot fsync a directory; rename is durable there.
	if err := d.Sync(); err != nil && runtime.GOOS != "windows" {
		return err
	}
	return nil
}
