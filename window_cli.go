//go:build !desktop

package main

import (
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"syscall"

	"agenthub/app/api"
	"agenthub/backend"
)

// windowName is the window binary, installed beside this one.
const windowName = "agenthub-window"

// window replaces this process with the window binary, with the same
// arguments and environment: it opens its own core, so the unopened one
// made here is dropped. Only that binary links GTK and WebKitGTK.
func window(_ *api.Core, _ fs.FS) error {
	path, err := windowBinary()
	if err != nil {
		return err
	}
	argv := append([]string{path}, os.Args[1:]...)
	if err := syscall.Exec(path, argv, os.Environ()); err != nil {
		return &backend.Error{Code: backend.CodeWindowUnavailable,
			Message: "the window program " + windowName + " could not be started",
			Err:     fmt.Errorf("exec %s: %w", windowName, err)}
	}
	return nil // not reached: Exec returns only on failure
}

// windowBinary is the executable window binary beside this executable.
func windowBinary() (string, error) {
	exe, err := os.Executable()
	if err == nil {
		exe, err = filepath.EvalSymlinks(exe)
	}
	missing := &backend.Error{Code: backend.CodeWindowUnavailable,
		Message: "the window program " + windowName + " is not installed beside agenthub", Err: err}
	if err != nil {
		return "", missing
	}
	path := filepath.Join(filepath.Dir(exe), windowName)
	fi, err := os.Stat(path)
	if err != nil || !fi.Mode().IsRegular() || fi.Mode().Perm()&0o111 == 0 {
		missing.Err = err
		return "", missing
	}
	return path, nil
}

// prepare has nothing to do: this binary is the small one and supervises
// its commands itself.
func prepare() {}
