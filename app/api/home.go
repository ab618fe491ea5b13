package api

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"agenthub/backend"
)

// ResolveHome picks the data directory: the --home flag, then AGENTHUB_HOME,
// then $XDG_DATA_HOME/agenthub, then ~/.local/share/agenthub.
func ResolveHome(flagValue string, getenv func(string) string) (string, error) {
	if flagValue != "" {
		return filepath.Abs(flagValue)
	}
	if v := getenv("AGENTHUB_HOME"); v != "" {
		return filepath.Abs(v)
	}
	if v := getenv("XDG_DATA_HOME"); v != "" {
		return filepath.Join(v, "agenthub"), nil
	}
	home, err := os.UserHomeDir()
	if err != nil {
		return "", fmt.Errorf("find the home directory: %w", err)
	}
	return filepath.Join(home, ".local", "share", "agenthub"), nil
}

// EnsureHome creates dir and proves it is writable by writing a probe file,
// so that a read-only data directory fails at start with a clear message
// instead of deep inside SQLite.
func EnsureHome(dir string) error {
	shown := DisplayPath(dir)
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return &backend.Error{Code: backend.CodeInvalidInput, Err: err,
			Message: fmt.Sprintf("the data directory %s cannot be created: %s", shown, reason(err))}
	}
	probe, err := os.CreateTemp(dir, ".write-probe-*")
	if err != nil {
		return &backend.Error{Code: backend.CodeInvalidInput, Err: err,
			Message: fmt.Sprintf("the data directory %s is not writable: %s", shown, reason(err))}
	}
	probe.Close()
	return os.Remove(probe.Name())
}

func reason(err error) string {
	switch {
	case errors.Is(err, os.ErrPermission):
		return "permission denied"
	case errors.Is(err, os.ErrExist):
		return "a file is in the way"
	}
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}

// DisplayPath rewrites the user's home directory to "~" for display.
func DisplayPath(p string) string {
	home, err := os.UserHomeDir()
	if err != nil || home == "" || home == "/" {
		return p
	}
	if p == home {
		return "~"
	}
	if strings.HasPrefix(p, home+string(filepath.Separator)) {
		return "~" + p[len(home):]
	}
	return p
}
