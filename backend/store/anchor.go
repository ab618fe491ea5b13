package store

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"sync"
)

// The anchor is the audit chain's head kept outside the database: the
// newest entry's seq and hash, MACed with the audit key. It is written after
// every commit that appended entries (commit first, then the anchor), so a
// crash between the two leaves the anchor behind the database, never ahead
// of it: a database head at or past the anchor's, whose entry at the
// anchor's seq has the anchor's hash, is consistent (the newer entries carry
// the key's MAC, which only AgentHub can compute). A database behind the
// anchor lost entries: truncated, deleted, a lost -wal, or restored from an
// older copy.
type anchor struct {
	Version   int    `json:"version"`
	Seq       int64  `json:"seq"`
	Hash      string `json:"hash"`
	KeyedFrom int64  `json:"keyedFrom"` // the first entry hashed with the key
	Key       string `json:"key"`       // where the key lives: file or keychain
	MAC       string `json:"mac"`
}

const anchorVersion = 1

func anchorPath(dbPath string) string { return dbPath + ".audit-head" }

func (a anchor) mac(key []byte) string {
	m := hmac.New(sha256.New, key)
	fmt.Fprintf(m, "agenthub audit anchor\x00%d\x00%d\x00%s\x00%d\x00%s", a.Version, a.Seq, a.Hash, a.KeyedFrom,
		a.Key)
	return hex.EncodeToString(m.Sum(nil))
}

// errNoAnchor is an anchor file that does not exist.
var errNoAnchor = errors.New("no anchor file")

// readAnchor reads the anchor without checking its MAC (the key's place is
// read from it first); see [anchor.valid].
func readAnchor(dbPath string) (anchor, error) {
	b, err := os.ReadFile(anchorPath(dbPath))
	if errors.Is(err, os.ErrNotExist) {
		return anchor{}, errNoAnchor
	}
	if err != nil {
		return anchor{}, fmt.Errorf("read the audit anchor: %w", err)
	}
	var a anchor
	if err := json.Unmarshal(b, &a); err != nil {
		return anchor{}, fmt.Errorf("the audit anchor %s is not an anchor: %w", filepath.Base(anchorPath(dbPath)), err)
	}
	return a, nil
}

func (a anchor) valid(key []byte) bool {
	return a.Version == anchorVersion && hmac.Equal([]byte(a.mac(key)), []byte(a.MAC))
}

// anchorWriter serialises this process's anchor writes; across processes
// the file lock (lockAnchor) does.
var anchorWriter sync.Mutex

// writeAnchor replaces the anchor with a, unless the anchor on disk is a
// valid one at the same or a newer seq (another writer's commit came later).
// The write is atomic: a temp file, fsync, rename, fsync of the directory.
func writeAnchor(dbPath string, key []byte, a anchor, force bool) error {
	anchorWriter.Lock()
	defer anchorWriter.Unlock()
	unlock, err := lockAnchor(dbPath)
	if err != nil {
		return err
	}
	defer unlock()
	if !force {
		if cur, err := readAnchor(dbPath); err == nil && cur.valid(key) && cur.Seq >= a.Seq {
			return nil
		}
	}
	a.Version = anchorVersion
	a.MAC = a.mac(key)
	b, err := json.Marshal(a)
	if err != nil {
		return fmt.Errorf("encode the audit anchor: %w", err)
	}
	return replaceFile(anchorPath(dbPath), append(b, '\n'))
}

// replaceFile writes data to path atomically and durably.
func replaceFile(path string, data []byte) error {
	var suffix [8]byte
	if _, err := rand.Read(suffix[:]); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	tmp := path + "." + hex.EncodeToString(suffix[:]) + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), err)
	}
	_, werr := f.Write(data)
	if err := errors.Join(werr, f.Sync(), f.Close()); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), errors.Join(err, os.Remove(tmp)))
	}
	if err := os.Rename(tmp, path); err != nil {
		return fmt.Errorf("write %s: %w", filepath.Base(path), errors.Join(err, os.Remove(tmp)))
	}
	return syncDir(filepath.Dir(path))
}

// ParseHead reads an exported head, "SEQ:HASH" (what `audit export` prints).
func ParseHead(s string) (seq int64, hash string, err error) {
	i := len(s) - 1
	for i >= 0 && s[i] != ':' {
		i--
	}
	if i <= 0 {
		return 0, "", fmt.Errorf("head %q: write SEQ:HASH, as `agenthub audit export` prints it", s)
	}
	seq, err = strconv.ParseInt(s[:i], 10, 64)
	if err != nil || seq < 0 {
		return 0, "", fmt.Errorf("head %q: the part before ':' is not an entry number", s)
	}
	hash = s[i+1:]
	if b, err := hex.DecodeString(hash); err != nil || len(b) != sha256.Size {
		return 0, "", fmt.Errorf("head %q: the part after ':' is not a 64-digit hex hash", s)
	}
	return seq, hash, nil
}
