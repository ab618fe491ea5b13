package approval

import (
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"strings"
)

// policyDir is the workspace policy directory, the parent of [PolicyPath].
const policyDir = ".agenthub"

// RuleChange is one rule written to a workspace's policy file by "always
// allow in this workspace": the text before and after (for the diff the app
// shows) and the block appended.
type RuleChange struct {
	Before []byte
	After  []byte
	Rule   string
	RuleID string // the name traces and the rules list use
}

// AppendRule appends the allow rule equivalent to g ([AddRule]) to the
// policy file of the workspace at root, creating .agenthub/ and the file
// when they are missing. The file is replaced atomically: a temporary file
// in .agenthub/ is written, synced and renamed over it, so a reader sees the
// old policy or the new one, never a part. Every access goes through an
// os.Root of the workspace, and a symlinked .agenthub/ or policy file is
// refused rather than followed. Grants no rule may express (push, publish,
// deploy, secrets) fail with [ErrNoGrant].
func AppendRule(root string, g Grant) (RuleChange, error) {
	if err := validGrant(g); err != nil {
		return RuleChange{}, err
	}
	defer lockFile("repo:" + root)()
	r, err := os.OpenRoot(root)
	if err != nil {
		return RuleChange{}, fmt.Errorf("open the workspace: %w", pathless(err))
	}
	defer r.Close()
	dir, err := openPolicyDir(r)
	if err != nil {
		return RuleChange{}, err
	}
	defer dir.Close()
	name := path.Base(PolicyPath)
	before, err := readPolicyFile(dir, name)
	if err != nil {
		return RuleChange{}, err
	}
	after, id, err := addRule(before, g)
	if err != nil {
		return RuleChange{}, err
	}
	if err := replaceFile(dir, name, after); err != nil {
		return RuleChange{}, fmt.Errorf("write %s: %w", PolicyPath, err)
	}
	return RuleChange{Before: before, After: after, Rule: strings.TrimPrefix(string(after), string(before)), RuleID: id}, nil
}

// openPolicyDir opens .agenthub/ as a root of its own, creating it first.
func openPolicyDir(r *os.Root) (*os.Root, error) {
	fi, err := r.Lstat(policyDir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		if err := r.Mkdir(policyDir, 0o755); err != nil && !errors.Is(err, fs.ErrExist) {
			return nil, fmt.Errorf("create %s: %w", policyDir, err)
		}
	case err != nil:
		return nil, fmt.Errorf("stat %s: %w", policyDir, pathless(err))
	default:
		if err := policyEntry(policyDir, fi); err != nil {
			return nil, err
		}
	}
	dir, err := r.OpenRoot(policyDir)
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", policyDir, err)
	}
	return dir, nil
}

// readPolicyFile returns the current text, or nil when there is no file.
func readPolicyFile(dir *os.Root, name string) ([]byte, error) {
	fi, err := dir.Lstat(name)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return nil, nil
	case err != nil:
		return nil, fmt.Errorf("stat %s: %w", PolicyPath, pathless(err))
	default:
		if err := policyEntry(PolicyPath, fi); err != nil {
			return nil, err
		}
	}
	data, err := dir.ReadFile(name)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", PolicyPath, err)
	}
	return data, nil
}

// replaceFile writes data to a temporary file beside name, syncs it and
// renames it over name.
func replaceFile(dir *os.Root, name string, data []byte) error {
	return replaceFileMode(dir, name, data, 0o644)
}

// replaceFileMode is replaceFile with the new file's mode (the data
// directory's rules are private: 0600).
func replaceFileMode(dir *os.Root, name string, data []byte, mode os.FileMode) (err error) {
	var nonce [8]byte
	_, _ = rand.Read(nonce[:])
	tmp := "." + name + ".tmp-" + hex.EncodeToString(nonce[:])
	f, err := dir.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, mode)
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			_ = dir.Remove(tmp)
		}
	}()
	if _, err := f.Write(data); err != nil {
		f.Close()
		return err
	}
	if err := f.Sync(); err != nil {
		f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return err
	}
	if err := dir.Rename(tmp, name); err != nil {
		return err
	}
	// The new policy is in place; syncing the directory only makes the
	// rename durable sooner, so its failure does not undo the change.
	if d, err := dir.Open("."); err == nil {
		_ = d.Sync()
		d.Close()
	}
	return nil
}
