package workspace

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"sort"
	"sync"
	"time"
)

// Change is one whole-file change proposed by an agent.
type Change struct {
	Path           string      `json:"path"`            // workspace-relative, '/'-separated
	PreimageSHA256 string      `json:"preimage_sha256"` // hex of the content the change was computed on, or "absent"
	NewContent     []byte      `json:"new_content,omitempty"`
	Delete         bool        `json:"delete,omitempty"`
	Mode           fs.FileMode `json:"mode,omitempty"` // permission bits; 0 keeps the current mode (0644 when new)
}

// Actions reported per file.
const (
	ActionCreated  = "created"
	ActionModified = "modified"
	ActionDeleted  = "deleted"
)

// FileResult is what happened to one file.
type FileResult struct {
	Path      string `json:"path"`
	Action    string `json:"action"`
	Preimage  string `json:"preimage"`
	Postimage string `json:"postimage"`
}

// ApplyResult names the checkpoint holding the pre-images (for [Undo]) and
// the per-file outcome, in path order.
type ApplyResult struct {
	CheckpointID string       `json:"checkpoint_id"`
	Files        []FileResult `json:"files"`
}

// Apply writes a set of whole-file changes atomically: every pre-image is
// verified first (a mismatch fails with ErrConflict, naming the files, and
// nothing is written), the pre-images are stored in the checkpoint store, new
// contents are staged as synced temp files next to their targets, the
// pre-images are verified again, and the temp files are renamed into place.
// A failure during the renames restores every file already replaced. Applies
// to one workspace are serialised by a per-workspace lock.
func Apply(w *FS, changes []Change, store *CheckpointStore) (ApplyResult, error) {
	return apply(w, changes, store, "write", ErrConflict, Options{}, "")
}

// Record checkpoints changes that someone else will write: an agent CLI
// that writes files itself once AgentHub approved the exact content. The
// pre-images are verified and stored like Apply's, and the manifest names
// the approved post-images, so [Undo] restores the files once they hold
// what was approved, and refuses otherwise. Nothing in the workspace is
// written.
func Record(w *FS, changes []Change, store *CheckpointStore) (string, error) {
	if store == nil {
		return "", errors.New("record: no checkpoint store")
	}
	ts, err := w.plan("record", changes)
	if err != nil {
		return "", err
	}
	unlock := w.lock()
	defer unlock()
	if err := w.verify("record", ts, ErrConflict); err != nil {
		return "", err
	}
	ck := newCheckpoint(w, ts)
	pre := map[string][]byte{}
	for _, t := range ts {
		pre[t.Path] = t.cur.data
	}
	if err := store.record(ck, pre); err != nil {
		return "", fmt.Errorf("record: %w", err)
	}
	return ck.ID, nil
}

// Undo restores the pre-images recorded by an apply. If any file no longer
// holds the content that apply wrote, it fails with ErrChanged naming the
// files, and nothing is restored. The undo is itself an apply with its own
// checkpoint, so it can be undone in turn.
func Undo(w *FS, store *CheckpointStore, checkpointID string) (ApplyResult, error) {
	return UndoWith(w, store, checkpointID, Options{})
}

// UndoWith is [Undo] with options.
func UndoWith(w *FS, store *CheckpointStore, checkpointID string, opts Options) (ApplyResult, error) {
	ck, err := store.Load(checkpointID)
	if err != nil {
		return ApplyResult{}, fmt.Errorf("undo: %w", err)
	}
	if ck.Workspace != w.key() {
		return ApplyResult{}, fmt.Errorf("undo %s: checkpoint belongs to another workspace: %w", ck.ID, ErrCheckpoint)
	}
	if ck.UndoneAt != nil {
		return ApplyResult{}, fmt.Errorf("undo %s: already undone: %w", ck.ID, ErrCheckpoint)
	}
	inverse := make([]Change, 0, len(ck.Files))
	for _, f := range ck.Files {
		c := Change{Path: f.Path, PreimageSHA256: f.Postimage, Mode: f.Mode}
		if f.Preimage == Absent {
			c.Delete = true
		} else if c.NewContent, err = store.Blob(f.Preimage); err != nil {
			return ApplyResult{}, fmt.Errorf("undo %s: %w", ck.ID, err)
		}
		inverse = append(inverse, c)
	}
	res, err := apply(w, inverse, store, "undo", ErrChanged, opts, ck.ID)
	if err != nil {
		return res, fmt.Errorf("undo %s: %w", ck.ID, err)
	}
	if err := MarkUndone(store, ck.ID); err != nil {
		return res, fmt.Errorf("undo %s: %w", ck.ID, err)
	}
	return res, nil
}

// MarkUndone records in a checkpoint's manifest that an undo restored it;
// recovery calls it for an undo whose files reached the disk but whose
// process died before this.
func MarkUndone(store *CheckpointStore, checkpointID string) error {
	ck, err := store.Load(checkpointID)
	if err != nil {
		return fmt.Errorf("mark undone: %w", err)
	}
	if ck.UndoneAt != nil {
		return nil
	}
	now := time.Now().UTC()
	ck.UndoneAt = &now
	store.mu.Lock()
	err = store.save(&ck)
	store.mu.Unlock()
	if err != nil {
		return fmt.Errorf("mark undone: %w", err)
	}
	return nil
}

// locks serialises applies per workspace root within this process.
var locks sync.Map // canonical root → *sync.Mutex

func (w *FS) lock() func() {
	m, _ := locks.LoadOrStore(w.dir, &sync.Mutex{})
	mu := m.(*sync.Mutex)
	mu.Lock()
	return mu.Unlock
}

// key identifies the workspace in checkpoint manifests without storing its
// path.
func (w *FS) key() string {
	s := sha256.Sum256([]byte(w.dir))
	return hex.EncodeToString(s[:])
}

// target is one change with the state found on disk.
type target struct {
	Change
	cur       current
	post      string // post-image hash
	stageAt   string // where the new content is staged, "" for deletes (named before the intent)
	restoreAt string // where a rollback stages the pre-image, "" for a new file
	tmp       string // the staged temp file while it exists
	replace   bool   // the rename/remove has happened
}

// apply verifies, checkpoints, records the intent (when opts has a journal),
// then stages and renames. Once the intent is recorded, a failure is
// reported to the journal with what the disk holds.
func apply(w *FS, changes []Change, store *CheckpointStore, op string, mismatch error, opts Options,
	undoes string) (ApplyResult, error) {
	if store == nil {
		return ApplyResult{}, fmt.Errorf("%s: no checkpoint store", op)
	}
	ts, err := w.plan(op, changes)
	if err != nil {
		return ApplyResult{}, err
	}
	unlock := w.lock()
	defer unlock()
	if err := w.verify(op, ts, mismatch); err != nil {
		return ApplyResult{}, err
	}
	ck := newCheckpoint(w, ts)
	pre := map[string][]byte{}
	for _, t := range ts {
		pre[t.Path] = t.cur.data
	}
	if err := store.record(ck, pre); err != nil {
		return ApplyResult{}, fmt.Errorf("%s: %w", op, err)
	}
	w.nameStaging(ts)
	in := intentOf(op, undoes, ck, ts)
	if opts.Journal != nil {
		if err := opts.Journal.Intend(in); err != nil {
			return ApplyResult{}, fmt.Errorf("%s: nothing was written: record the intent: %w", op, err)
		}
	}
	if err := w.commit(op, ts, mismatch); err != nil {
		if opts.Journal != nil {
			opts.Journal.Abandon(ck.ID, w.verdict(in), err)
		}
		return ApplyResult{}, err
	}
	if res, err := store.GC(ck.ID); err != nil {
		slog.Warn("checkpoint gc failed", "err", err, "checkpoint_id", ck.ID)
	} else if res.Checkpoints > 0 {
		slog.Info("checkpoint gc", "checkpoints", res.Checkpoints, "blobs", res.Blobs, "bytes", res.Bytes)
	}
	return result(ck.ID, ts), nil
}

// plan validates every change without touching the disk.
func (w *FS) plan(op string, changes []Change) ([]*target, error) {
	if len(changes) == 0 {
		return nil, fmt.Errorf("%s: no changes", op)
	}
	seen := map[string]bool{}
	ts := make([]*target, 0, len(changes))
	for _, c := range changes {
		p, err := clean(op, c.Path, w.windows)
		if err != nil {
			return nil, err
		}
		if p == "." {
			return nil, outside(op, c.Path, "the workspace root is not a file")
		}
		if cl := Classify(p); cl != ClassNone {
			return nil, protected(op, p, fmt.Sprintf("agents may not write %s files", cl))
		}
		if seen[p] {
			return nil, fmt.Errorf("%s %s: path appears twice in one patch", op, p)
		}
		seen[p] = true
		if c.PreimageSHA256 != Absent && !blobName.MatchString(c.PreimageSHA256) {
			return nil, fmt.Errorf("%s %s: malformed pre-image hash %q", op, p, c.PreimageSHA256)
		}
		if c.Delete && c.PreimageSHA256 == Absent {
			return nil, fmt.Errorf("%s %s: cannot delete a file expected to be absent", op, p)
		}
		c.Path = p
		ts = append(ts, &target{Change: c, post: postimage(c)})
	}
	for p := range seen {
		for d := dirOf(p); d != "."; d = dirOf(d) {
			if seen[d] {
				return nil, fmt.Errorf("%s %s: also written as a directory of %s", op, d, p)
			}
		}
	}
	sort.Slice(ts, func(i, j int) bool { return ts[i].Path < ts[j].Path })
	return ts, nil
}

func postimage(c Change) string {
	if c.Delete {
		return Absent
	}
	return Hash(c.NewContent)
}

// verify reads each target's current state and compares it with the expected
// pre-image; every mismatch is reported at once.
func (w *FS) verify(op string, ts []*target, mismatch error) error {
	var bad []string
	for _, t := range ts {
		cur, err := w.readCurrent(op, t.Path)
		if err != nil {
			return err
		}
		t.cur = cur
		if cur.hash != t.PreimageSHA256 {
			bad = append(bad, t.Path)
		}
	}
	if len(bad) > 0 {
		return &FilesError{Paths: bad, Err: mismatch}
	}
	return nil
}

func newCheckpoint(w *FS, ts []*target) *Checkpoint {
	now := time.Now().UTC()
	ck := &Checkpoint{ID: newCheckpointID(now), Workspace: w.key(), CreatedAt: now}
	for _, t := range ts {
		ck.Files = append(ck.Files, CheckpointFile{Path: t.Path, Preimage: t.cur.hash, Postimage: t.post, Mode: t.cur.mode})
	}
	return ck
}

func result(id string, ts []*target) ApplyResult {
	res := ApplyResult{CheckpointID: id}
	for _, t := range ts {
		action := ActionModified
		switch {
		case t.Delete:
			action = ActionDeleted
		case t.cur.hash == Absent:
			action = ActionCreated
		}
		res.Files = append(res.Files, FileResult{Path: t.Path, Action: action, Preimage: t.cur.hash, Postimage: t.post})
	}
	return res
}
