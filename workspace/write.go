package workspace

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"log/slog"
	"os"
	"runtime"
	"strings"

	"agenthub/workspace/crashpoint"
)

// current is what a target path holds right now.
type current struct {
	hash string // SHA-256 hex, or Absent
	data []byte
	mode fs.FileMode
}

// testHook, when set by a test, runs at fixed points of the commit phase:
// "staged" once after all temp files are written (before the second
// verification), "replace" before each rename or remove (an error is treated
// like a failed rename).
var testHook func(phase string, i int, path string) error

// readCurrent reads a write target without following any symlink: parents
// must be real directories (or missing), the file itself a regular file with
// one link (or missing).
func (w *FS) readCurrent(op, p string) (current, error) {
	parts := strings.Split(p, "/")
	for i := 1; i < len(parts); i++ {
		dir := strings.Join(parts[:i], "/")
		fi, err := w.root.Lstat(dir)
		if errors.Is(err, fs.ErrNotExist) {
			break
		}
		if err != nil {
			return current{}, w.mapErr(op, dir, err)
		}
		if fi.Mode()&fs.ModeSymlink != 0 {
			return current{}, outside(op, p, "a parent directory is a symlink; writes never follow symlinks")
		}
		if !fi.IsDir() {
			return current{}, &PathError{Op: op, Path: p, Reason: "a parent is not a directory", Err: fs.ErrInvalid}
		}
	}
	fi, err := w.root.Lstat(p)
	if errors.Is(err, fs.ErrNotExist) {
		return current{hash: Absent}, nil
	}
	if err != nil {
		return current{}, w.mapErr(op, p, err)
	}
	if fi.Mode()&fs.ModeSymlink != 0 {
		return current{}, outside(op, p, "the file is a symlink; writes never follow symlinks")
	}
	lfi := fi
	f, fi, err := w.openRegular(op, p)
	if err != nil {
		return current{}, err
	}
	defer f.Close()
	if !os.SameFile(lfi, fi) {
		// Swapped for a symlink (or another file) between the two looks.
		return current{}, outside(op, p, "the file changed into a link while it was read; writes never follow symlinks")
	}
	if fi.Size() > w.MaxRead {
		return current{}, &PathError{Op: op, Path: p, Reason: "pre-image exceeds the read limit", Err: ErrTooLarge}
	}
	data, err := io.ReadAll(io.LimitReader(f, w.MaxRead+1))
	if err != nil {
		return current{}, fmt.Errorf("%s %s: read pre-image: %w", op, p, err)
	}
	return current{hash: Hash(data), data: data, mode: fi.Mode().Perm()}, nil
}

// commit stages, re-verifies and renames. On any failure the workspace is
// left as it was before the call.
func (w *FS) commit(op string, ts []*target, mismatch error) (err error) {
	var created []string
	defer func() {
		if err != nil {
			w.cleanup(ts, created)
		}
	}()
	for _, t := range ts {
		if t.Delete {
			continue
		}
		dirs, err := w.mkdirs(dirOf(t.Path))
		created = append(created, dirs...)
		if err != nil {
			return fmt.Errorf("%s %s: create directory: %w", op, t.Path, err)
		}
		if t.tmp, err = w.stage(t.stageAt, t.NewContent, w.modeFor(t)); err != nil {
			return fmt.Errorf("%s %s: stage: %w", op, t.Path, err)
		}
	}
	if testHook != nil {
		if err := testHook("staged", -1, ""); err != nil {
			return err
		}
	}
	// Close the window between the first check and the renames as far as
	// this process can: anything edited meanwhile is a conflict.
	var bad []string
	for _, t := range ts {
		cur, err := w.readCurrent(op, t.Path)
		if err != nil {
			return err
		}
		if cur.hash != t.cur.hash {
			bad = append(bad, t.Path)
		}
	}
	if len(bad) > 0 {
		return &FilesError{Paths: bad, Err: mismatch}
	}
	for i, t := range ts {
		if err := w.replace(i, t); err != nil {
			if rerr := w.rollback(ts); rerr != nil {
				return fmt.Errorf("%s %s: %w; rollback incomplete: %w", op, t.Path, err, rerr)
			}
			return fmt.Errorf("%s %s: %w (all files rolled back)", op, t.Path, err)
		}
	}
	if err := w.syncDirs(ts); err != nil {
		// The renames happened; only their durability is in doubt.
		slog.Warn("apply: directory sync failed", "err", err)
	}
	return nil
}

func (w *FS) modeFor(t *target) fs.FileMode {
	switch {
	case t.Mode.Perm() != 0:
		return t.Mode.Perm()
	case t.cur.hash != Absent:
		return t.cur.mode
	}
	return 0o644
}

func (w *FS) replace(i int, t *target) error {
	if testHook != nil {
		if err := testHook("replace", i, t.Path); err != nil {
			return err
		}
	}
	var err error
	switch {
	case t.Delete:
		if err = crashpoint.Hit("workspace.remove"); err == nil {
			err = w.root.Remove(t.Path)
		}
	default:
		if err = crashpoint.Hit("workspace.rename"); err == nil {
			err = w.root.Rename(t.tmp, t.Path)
		}
	}
	if err != nil {
		return w.mapErr("write", t.Path, err)
	}
	t.replace, t.tmp = true, ""
	return nil
}

// rollback puts back the pre-image of every target already replaced.
func (w *FS) rollback(ts []*target) error {
	var errs []error
	for i := len(ts) - 1; i >= 0; i-- {
		t := ts[i]
		if !t.replace {
			continue
		}
		if t.cur.hash == Absent {
			if err := w.root.Remove(t.Path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, fmt.Errorf("remove %s: %w", t.Path, err))
			}
			continue
		}
		tmp, err := w.stage(t.restoreAt, t.cur.data, t.cur.mode)
		if err == nil {
			if err = w.root.Rename(tmp, t.Path); err != nil {
				_ = w.root.Remove(tmp)
			}
		}
		if err != nil {
			errs = append(errs, fmt.Errorf("restore %s: %w", t.Path, err))
			continue
		}
		t.replace = false
	}
	return errors.Join(errs...)
}

// cleanup removes staged temp files and the directories this apply created
// (only if they are empty again).
func (w *FS) cleanup(ts []*target, created []string) {
	for _, t := range ts {
		if t.tmp != "" {
			_ = w.root.Remove(t.tmp)
			t.tmp = ""
		}
	}
	for i := len(created) - 1; i >= 0; i-- {
		_ = w.root.Remove(created[i])
	}
}

// mkdirs creates the missing directories of dir, returning them outermost
// first.
func (w *FS) mkdirs(dir string) ([]string, error) {
	if dir == "." {
		return nil, nil
	}
	var made []string
	parts := strings.Split(dir, "/")
	for i := 1; i <= len(parts); i++ {
		p := strings.Join(parts[:i], "/")
		fi, err := w.root.Lstat(p)
		if err == nil {
			if !fi.IsDir() {
				return made, fmt.Errorf("%s is not a directory", p)
			}
			continue
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return made, w.mapErr("mkdir", p, err)
		}
		if err := w.root.Mkdir(p, 0o755); err != nil {
			return made, w.mapErr("mkdir", p, err)
		}
		made = append(made, p)
	}
	return made, nil
}

// stage writes data to the new temp file tmp (named by nameStaging, so the
// intent knows it) and syncs it. The mode is set on the open handle, so no
// umask or symlink race applies.
func (w *FS) stage(tmp string, data []byte, mode fs.FileMode) (string, error) {
	if tmp == "" {
		return "", errors.New("stage: no staging name")
	}
	if err := crashpoint.Hit("workspace.stage.create"); err != nil {
		return "", fmt.Errorf("stage %s: %w", tmp, err)
	}
	f, err := w.root.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return "", w.mapErr("stage", tmp, err)
	}
	if err = crashpoint.Hit("workspace.stage.write"); err == nil {
		_, err = f.Write(data)
	}
	if err == nil && runtime.GOOS != "windows" {
		err = f.Chmod(mode)
	}
	if err == nil {
		if err = crashpoint.Hit("workspace.stage.fsync"); err == nil {
			err = f.Sync()
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		_ = w.root.Remove(tmp)
		return "", fmt.Errorf("stage %s: %w", tmp, err)
	}
	return tmp, nil
}

// syncDirs makes the renames durable.
func (w *FS) syncDirs(ts []*target) error {
	if runtime.GOOS == "windows" {
		return nil
	}
	done := map[string]bool{}
	for _, t := range ts {
		d := dirOf(t.Path)
		if done[d] {
			continue
		}
		done[d] = true
		if err := crashpoint.Hit("workspace.dirsync"); err != nil {
			return err
		}
		f, err := w.open(d)
		if err != nil {
			return w.mapErr("sync", d, err)
		}
		err = f.Sync()
		f.Close()
		if err != nil {
			return fmt.Errorf("sync %s: %w", d, err)
		}
	}
	return nil
}
