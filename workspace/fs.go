package workspace

import (
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"sort"
	"strings"
	"syscall"
)

// DefaultMaxRead caps a single [FS.ReadFile].
const DefaultMaxRead = 16 << 20

// DefaultMaxEntries caps a single [FS.ReadDir].
const DefaultMaxEntries = 10000

// FS is rooted, read-only access to one workspace. Every method takes a
// workspace-relative path with '/' separators and goes through os.Root, so
// neither a crafted name nor a symlink (even one created or swapped mid-run)
// reaches outside the root. Writes go only through [Apply] and [Undo].
// An FS is safe for concurrent use.
type FS struct {
	root    *os.Root
	dir     string // canonical absolute root; never shown, never persisted
	windows bool   // apply the Windows name rules

	// MaxRead caps ReadFile; MaxEntries caps ReadDir. Set before use.
	MaxRead    int64
	MaxEntries int
}

// Open opens the workspace at root, which must be a canonical directory
// (see [Canonical]).
func Open(root string) (*FS, error) {
	dir, err := filepath.Abs(root)
	if err != nil {
		return nil, fmt.Errorf("open workspace: %w", err)
	}
	r, err := os.OpenRoot(dir)
	if err != nil {
		return nil, fmt.Errorf("open workspace: %w", err)
	}
	return &FS{
		root: r, dir: dir, windows: runtime.GOOS == "windows",
		MaxRead: DefaultMaxRead, MaxEntries: DefaultMaxEntries,
	}, nil
}

// Close releases the root handle.
func (w *FS) Close() error { return w.root.Close() }

// Relative turns an absolute path that lies lexically under the workspace
// root (as agents such as Claude Code send them) into a workspace-relative
// one. Anything else fails with ErrOutsideRoot. The result still has to pass
// the rooted methods, which resolve symlinks safely.
func (w *FS) Relative(abs string) (string, error) {
	if !filepath.IsAbs(abs) {
		return clean("resolve", abs, w.windows)
	}
	c := filepath.Clean(abs)
	if !within(w.dir, c) {
		return "", outside("resolve", "(absolute path)", "absolute path outside the workspace")
	}
	rel, err := filepath.Rel(w.dir, c)
	if err != nil {
		return "", outside("resolve", "(absolute path)", "absolute path outside the workspace")
	}
	return clean("resolve", filepath.ToSlash(rel), w.windows)
}

// Resolve validates a workspace-relative path without touching the disk and
// returns its canonical form ("." for the root).
func (w *FS) Resolve(rel string) (string, error) { return clean("resolve", rel, w.windows) }

// ReadFile reads a regular file, refusing hard-linked files (they may be
// aliases of files outside the workspace) and files over MaxRead.
func (w *FS) ReadFile(rel string) ([]byte, error) {
	p, err := clean("read", rel, w.windows)
	if err != nil {
		return nil, err
	}
	f, fi, err := w.openRegular("read", p)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if fi.Size() > w.MaxRead {
		return nil, &PathError{Op: "read", Path: p, Reason: fmt.Sprintf("%d bytes, limit %d", fi.Size(), w.MaxRead), Err: ErrTooLarge}
	}
	data, err := io.ReadAll(io.LimitReader(f, w.MaxRead+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", p, err)
	}
	if int64(len(data)) > w.MaxRead {
		return nil, &PathError{Op: "read", Path: p, Reason: fmt.Sprintf("grew beyond limit %d", w.MaxRead), Err: ErrTooLarge}
	}
	return data, nil
}

// openRegular opens p for reading and checks, on the open handle (so there is
// no window between check and use), that it is a regular file with one link.
// A FIFO, socket or device is refused before it is opened when the stat
// sees it, and never blocks the open when it was swapped in after the stat:
// the open is non-blocking (see nonBlocking).
func (w *FS) openRegular(op, p string) (*os.File, fs.FileInfo, error) {
	if fi, err := w.root.Stat(p); err == nil && !fi.Mode().IsRegular() {
		return nil, nil, notRegular(op, p, fi.Mode())
	}
	f, err := w.open(p)
	if err != nil {
		return nil, nil, w.mapErr(op, p, err)
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, nil, fmt.Errorf("%s %s: %w", op, p, err)
	}
	if !fi.Mode().IsRegular() {
		f.Close()
		return nil, nil, notRegular(op, p, fi.Mode())
	}
	if n := linkCount(f, fi); n > 1 {
		f.Close()
		return nil, nil, outside(op, p, fmt.Sprintf("file has %d hard links and may alias a file outside the workspace", n))
	}
	return f, fi, nil
}

// open opens p read-only and non-blocking through the root.
func (w *FS) open(p string) (*os.File, error) {
	return w.root.OpenFile(p, os.O_RDONLY|nonBlocking, 0)
}

// notRegular is the error for a FIFO, socket, device or directory where a
// file was expected.
func notRegular(op, p string, m fs.FileMode) error {
	return &PathError{Op: op, Path: p, Reason: "not a regular file (" + kindOf(m) + "); only regular files are read or written", Err: fs.ErrInvalid}
}

// kindOf names a file type for an error message.
func kindOf(m fs.FileMode) string {
	switch {
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeCharDevice != 0:
		return "a character device"
	case m&fs.ModeDevice != 0:
		return "a block device"
	case m&fs.ModeSymlink != 0:
		return "a symbolic link"
	case m.IsRegular():
		return "a regular file"
	}
	return "an irregular file"
}

// Entry is one directory entry, named relative to the workspace.
type Entry struct {
	Path    string      `json:"path"`
	Name    string      `json:"name"`
	Mode    fs.FileMode `json:"mode"`
	Size    int64       `json:"size"`
	Symlink bool        `json:"symlink,omitempty"`
}

// ReadDir lists a directory, sorted by name, at most MaxEntries entries; the
// second result reports whether the listing was truncated. Symlinks are
// listed as such and never followed.
func (w *FS) ReadDir(rel string) ([]Entry, bool, error) {
	p, err := clean("list", rel, w.windows)
	if err != nil {
		return nil, false, err
	}
	d, err := w.open(p)
	if err != nil {
		return nil, false, w.mapErr("list", p, err)
	}
	defer d.Close()
	if fi, err := d.Stat(); err != nil {
		return nil, false, fmt.Errorf("list %s: %w", p, err)
	} else if !fi.IsDir() {
		return nil, false, &PathError{Op: "list", Path: p, Reason: "not a directory (" + kindOf(fi.Mode()) + ")", Err: fs.ErrInvalid}
	}
	des, err := d.ReadDir(w.MaxEntries + 1)
	if err != nil && !errors.Is(err, io.EOF) {
		return nil, false, fmt.Errorf("list %s: %w", p, err)
	}
	truncated := len(des) > w.MaxEntries
	if truncated {
		des = des[:w.MaxEntries]
	}
	out := make([]Entry, 0, len(des))
	for _, de := range des {
		e := Entry{Path: join(p, de.Name()), Name: de.Name(), Mode: de.Type(), Symlink: de.Type()&fs.ModeSymlink != 0}
		if info, err := de.Info(); err == nil {
			e.Mode, e.Size = info.Mode(), info.Size()
		}
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Name < out[j].Name })
	return out, truncated, nil
}

// Stat follows symlinks inside the workspace; a symlink leading out fails
// with ErrOutsideRoot.
func (w *FS) Stat(rel string) (fs.FileInfo, error) {
	p, err := clean("stat", rel, w.windows)
	if err != nil {
		return nil, err
	}
	fi, err := w.root.Stat(p)
	if err != nil {
		return nil, w.mapErr("stat", p, err)
	}
	return w.checkLinks("stat", p, fi)
}

// Lstat describes the entry itself, without following a final symlink.
func (w *FS) Lstat(rel string) (fs.FileInfo, error) {
	p, err := clean("stat", rel, w.windows)
	if err != nil {
		return nil, err
	}
	fi, err := w.root.Lstat(p)
	if err != nil {
		return nil, w.mapErr("stat", p, err)
	}
	return w.checkLinks("stat", p, fi)
}

// checkLinks refuses the metadata of hard-linked regular files too: their
// size and times may be those of a file outside the workspace.
func (w *FS) checkLinks(op, p string, fi fs.FileInfo) (fs.FileInfo, error) {
	if fi.Mode().IsRegular() {
		if n := statLinkCount(w.root, p, fi); n > 1 {
			return nil, outside(op, p, fmt.Sprintf("file has %d hard links and may alias a file outside the workspace", n))
		}
	}
	return fi, nil
}

// mapErr turns os.Root's escape errors into ErrOutsideRoot and strips the
// absolute root from everything else.
func (w *FS) mapErr(op, p string, err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		if isEscape(pe.Err) {
			return outside(op, p, "resolves outside the workspace (symlink or parent reference)")
		}
		return &PathError{Op: op, Path: p, Reason: Scrub(pe.Err.Error(), w.dir, ""), Err: pe.Err}
	}
	if isEscape(err) {
		return outside(op, p, "resolves outside the workspace")
	}
	return fmt.Errorf("%s %s: %w", op, p, err)
}

// isEscape recognises os.Root's unexported "path escapes from parent" error.
// ELOOP is included: too many symlinks is treated as hostile.
func isEscape(err error) bool {
	return err != nil && (err.Error() == "path escapes from parent" || errors.Is(err, syscall.ELOOP))
}

func join(dir, name string) string {
	if dir == "." {
		return name
	}
	return dir + "/" + name
}

// dirOf returns the parent of a cleaned relative path ("." at the top).
func dirOf(p string) string {
	if i := strings.LastIndexByte(p, '/'); i >= 0 {
		return p[:i]
	}
	return "."
}
