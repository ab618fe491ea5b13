package workspace

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"regexp"
	"strings"
)

// Intent is an effect on the workspace announced before its first byte
// reaches the disk (intent before effect, docs/RELIABILITY.md): the files
// with their hashes before and after, and every staging file the effect may
// leave behind if the process dies.
type Intent struct {
	ID      string       // the effect's checkpoint id
	Op      string       // "write" or "undo"
	Undoes  string       // for an undo, the checkpoint it restores
	Files   []IntentFile // in path order
	Staging []string     // workspace-relative
}

// IntentFile is one file of an intent: its hash before and after the effect
// (SHA-256 hex, or [Absent]).
type IntentFile struct {
	Path   string
	Before string
	After  string
}

// Verdict is what the disk holds for an intent's files.
type Verdict string

const (
	// VerdictApplied: every file holds its after-image.
	VerdictApplied Verdict = "applied"
	// VerdictNotApplied: every file holds its before-image.
	VerdictNotApplied Verdict = "not_applied"
	// VerdictConflict: some file holds neither, or the files disagree; only
	// the user can say which content is right.
	VerdictConflict Verdict = "conflict"
)

// Journal records intents durably. Intend must return only once the intent
// is committed; an error stops the effect before anything is written.
// Abandon records that an effect failed after its intent, with what the disk
// holds now. The effect's success is recorded by the caller, with the
// applied event, in the transaction that closes the intent.
type Journal interface {
	Intend(Intent) error
	Abandon(id string, v Verdict, cause error)
}

// Options are the optional parts of an apply.
type Options struct {
	// Journal, when set, records the apply as an intent before its effect.
	Journal Journal
}

// ApplyWith is [Apply] with options.
func ApplyWith(w *FS, changes []Change, store *CheckpointStore, opts Options) (ApplyResult, error) {
	return apply(w, changes, store, "write", ErrConflict, opts, "")
}

// FileState is one intent file as found on disk.
type FileState struct {
	IntentFile
	Found string // SHA-256 hex, Absent, or "unreadable: …"
}

// Reconcile compares an intent's files with the disk and removes its staging
// files. It changes no file of the intent: a conflict is the user's to
// resolve. The verdict is Applied when every file holds its after-image,
// NotApplied when every file holds its before-image (a file whose before and
// after are equal counts for both), and Conflict otherwise.
func Reconcile(w *FS, in Intent) (Verdict, []FileState, error) {
	unlock := w.lock()
	defer unlock()
	return w.reconcile(in)
}

// verdict is what a failed apply left, for its journal.
func (w *FS) verdict(in Intent) Verdict {
	v, _, _ := w.reconcile(in)
	return v
}

func (w *FS) reconcile(in Intent) (Verdict, []FileState, error) {
	var errs []error
	if err := w.completePartial(in); err != nil {
		errs = append(errs, err)
	}
	for _, s := range in.Staging {
		if err := w.removeStaging(s); err != nil {
			errs = append(errs, err)
		}
	}
	states := make([]FileState, 0, len(in.Files))
	after, before := true, true
	for _, f := range in.Files {
		st := FileState{IntentFile: f}
		cur, err := w.readCurrent("reconcile", f.Path)
		if err != nil {
			st.Found = "unreadable: " + err.Error()
		} else {
			st.Found = cur.hash
		}
		after = after && st.Found == f.After
		before = before && st.Found == f.Before
		states = append(states, st)
	}
	v := VerdictConflict
	switch {
	case after:
		v = VerdictApplied
	case before:
		v = VerdictNotApplied
	}
	return v, states, errors.Join(errs...)
}

// completePartial finishes an apply that a crash cut between two of its
// renames, so that a multi-file change is all or nothing (issue 15): when
// every file holds its before- or its after-image, at least one its
// after-image, and the staging file of each other one still holds exactly
// its after-image (commit stages every file before the first rename), the
// rest of the renames and removals are made, as if the crash had come a
// moment later. The disk then holds the approved change whole, which the
// verdict records as applied (with its checkpoint, so it can be undone).
// Anything less certain changes nothing and is left to the verdict.
func (w *FS) completePartial(in Intent) error {
	var pending []IntentFile
	anyAfter := false
	for _, f := range in.Files {
		cur, err := w.readCurrent("reconcile", f.Path)
		switch {
		case err != nil:
			return nil
		case cur.hash == f.After:
			anyAfter = true
		case cur.hash == f.Before:
			pending = append(pending, f)
		default:
			return nil
		}
	}
	if !anyAfter || len(pending) == 0 {
		return nil
	}
	staged := map[string][]string{} // after-image hash → staging paths (two files may get one content)
	for _, s := range in.Staging {
		if !stagingName.MatchString(baseOf(s)) || strings.HasSuffix(s, ".restore.tmp") {
			continue
		}
		if cur, err := w.readCurrent("reconcile", s); err == nil && cur.hash != Absent {
			staged[cur.hash] = append(staged[cur.hash], s)
		}
	}
	need := map[string]int{}
	for _, f := range pending {
		if f.After != Absent {
			need[f.After]++
		}
	}
	for h, n := range need {
		if len(staged[h]) < n {
			return nil // a staging file is gone: the user decides
		}
	}
	for _, f := range pending {
		var err error
		if f.After == Absent {
			err = w.root.Remove(f.Path)
		} else {
			from := staged[f.After][0]
			staged[f.After] = staged[f.After][1:]
			if _, err = w.mkdirs(dirOf(f.Path)); err == nil {
				err = w.root.Rename(from, f.Path)
			}
		}
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			return w.mapErr("reconcile", f.Path, err)
		}
	}
	return nil
}

// removeStaging removes one staging file a dead effect may have left: only a
// regular file whose name is a staging name is ever removed.
func (w *FS) removeStaging(p string) error {
	if !stagingName.MatchString(baseOf(p)) {
		return fmt.Errorf("reconcile: %q is not a staging file name", p)
	}
	fi, err := w.root.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return w.mapErr("reconcile", p, err)
	}
	if !fi.Mode().IsRegular() {
		return fmt.Errorf("reconcile: staging path %s is not a regular file; left alone", p)
	}
	if err := w.root.Remove(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return w.mapErr("reconcile", p, err)
	}
	return nil
}

// stagingName is the base name of every staging file.
var stagingName = regexp.MustCompile(`^\.agenthub-[0-9a-f]{16}(\.restore)?\.tmp$`)

func baseOf(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[i+1:]
	}
	return p
}

// stagingDir is where an apply stages new contents: a directory inside the
// repository's own .git, which no checkout, status or commit ever shows, so a
// staging file is never left among the user's files. Only a real .git
// directory qualifies (not a symlink, not a worktree's .git file); without
// one, files are staged next to their targets as before. Either way every
// staging name is in the intent, and recovery removes it.
const stagingDir = ".git/agenthub-staging"

func (w *FS) stagingRoot() string {
	fi, err := w.root.Lstat(".git")
	if err != nil || !fi.IsDir() {
		return ""
	}
	if err := w.root.Mkdir(stagingDir, 0o700); err != nil && !errors.Is(err, fs.ErrExist) {
		return ""
	}
	fi, err = w.root.Lstat(stagingDir)
	if err != nil || !fi.IsDir() {
		return ""
	}
	return stagingDir
}

// sameDevice reports whether a rename from dir a to dir b can work: both on
// one filesystem (b's nearest existing ancestor, since the apply creates the
// rest under it). Unknown is false.
func (w *FS) sameDevice(a, b string) bool {
	fa, err := w.root.Lstat(a)
	if err != nil {
		return false
	}
	for {
		fb, err := w.root.Lstat(b)
		if err == nil {
			da, oka := deviceOf(fa)
			db, okb := deviceOf(fb)
			return oka && okb && da == db
		}
		if !errors.Is(err, fs.ErrNotExist) || b == "." {
			return false
		}
		b = dirOf(b)
	}
}

// nameStaging chooses, before the intent is recorded, where each target's
// new content and (for a rollback) its restored pre-image will be staged.
func (w *FS) nameStaging(ts []*target) {
	root := w.stagingRoot()
	for _, t := range ts {
		dir := dirOf(t.Path)
		if root != "" && w.sameDevice(root, dir) {
			dir = root
		}
		var r [8]byte
		_, _ = rand.Read(r[:])
		base := join(dir, ".agenthub-"+hex.EncodeToString(r[:]))
		if !t.Delete {
			t.stageAt = base + ".tmp"
		}
		if t.cur.hash != Absent {
			t.restoreAt = base + ".restore.tmp"
		}
	}
}

func intentOf(op, undoes string, ck *Checkpoint, ts []*target) Intent {
	in := Intent{ID: ck.ID, Op: op, Undoes: undoes}
	for _, t := range ts {
		in.Files = append(in.Files, IntentFile{Path: t.Path, Before: t.cur.hash, After: t.post})
		for _, s := range []string{t.stageAt, t.restoreAt} {
			if s != "" {
				in.Staging = append(in.Staging, s)
			}
		}
	}
	return in
}
