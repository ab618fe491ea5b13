package git

import (
	"io/fs"
	"os"
	"syscall"

	"github.com/go-git/go-billy/v5"
)

// nonBlockingFS is the work tree as go-git sees it, with every read-only
// open made non-blocking and anything that is not a regular file (a FIFO, a
// socket, a device) reported as absent. go-git opens .gitignore files and
// work-tree files with a plain open(2), which blocks forever on a FIFO a
// cloned repository ships; git does not track such files, so for status and
// staging they do not exist.
type nonBlockingFS struct{ billy.Filesystem }

func (n nonBlockingFS) Open(name string) (billy.File, error) {
	return n.OpenFile(name, os.O_RDONLY, 0)
}

func (n nonBlockingFS) OpenFile(name string, flag int, perm os.FileMode) (billy.File, error) {
	if flag&(os.O_WRONLY|os.O_RDWR) != 0 {
		return n.Filesystem.OpenFile(name, flag, perm)
	}
	if fi, err := n.Filesystem.Stat(name); err == nil && !fi.Mode().IsRegular() && !fi.IsDir() {
		return nil, irregular(name)
	}
	f, err := n.Filesystem.OpenFile(name, flag|syscall.O_NONBLOCK, perm)
	if err != nil {
		return nil, err
	}
	// Checked again on the open handle: a FIFO swapped in after the stat.
	if st, ok := f.(interface{ Stat() (os.FileInfo, error) }); ok {
		fi, err := st.Stat()
		if err != nil || (!fi.Mode().IsRegular() && !fi.IsDir()) {
			f.Close()
			return nil, irregular(name)
		}
	}
	return f, nil
}

// Chroot keeps the wrapper around a sub-tree (go-git chroots into
// submodules and nested directories).
func (n nonBlockingFS) Chroot(path string) (billy.Filesystem, error) {
	c, err := n.Filesystem.Chroot(path)
	if err != nil {
		return nil, err
	}
	return nonBlockingFS{c}, nil
}

func irregular(name string) error {
	return &os.PathError{Op: "open", Path: name, Err: fs.ErrNotExist}
}
