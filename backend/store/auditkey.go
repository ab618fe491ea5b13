package store

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"runtime"

	"github.com/zalando/go-keyring"

	"agenthub/backend"
)

// The audit chain's HMAC key lives outside the database, so that whoever
// can edit the database file cannot recompute a chain that verifies: in the
// OS keychain when the session has one, else in a 0600 file beside the
// database. Where it lives is recorded in the anchor ([anchor.Key]), so a
// keychain that is locked later is an error, never a silent new key.
const (
	keyInKeychain = "keychain"
	keyInFile     = "file"

	keychainService = "agenthub-audit"
	auditKeyBytes   = 32
)

// auditKeyEnv chooses where a new key goes: "file" keeps it out of the OS
// keychain (tests, headless machines whose keychain prompts).
const auditKeyEnv = "AGENTHUB_AUDIT_KEY"

func keyFilePath(dbPath string) string { return dbPath + ".audit-key" }

// keychainAccount names the keychain entry of one database: a digest of its
// absolute path, so two data directories never share a key.
func keychainAccount(dbPath string) string {
	abs, err := filepath.Abs(dbPath)
	if err != nil {
		abs = dbPath
	}
	sum := sha256.Sum256([]byte(abs))
	return hex.EncodeToString(sum[:16])
}

// keychainUsable reports whether a new key should go to the OS keychain: on
// macOS and Windows always, on Linux when the session has a D-Bus session bus
// (the Secret Service lives there; without one, go-keyring would try to
// launch a bus of its own).
func keychainUsable() bool {
	if os.Getenv(auditKeyEnv) == keyInFile {
		return false
	}
	switch runtime.GOOS {
	case "darwin", "windows":
		return true
	case "linux", "freebsd", "openbsd", "netbsd":
		return os.Getenv("DBUS_SESSION_BUS_ADDRESS") != ""
	}
	return false
}

// errNoAuditKey is an audit key that is recorded as existing but is gone.
var errNoAuditKey = errors.New("the audit key is missing")

// loadAuditKey returns the key recorded at where ("file", "keychain", or ""
// when no anchor says), creating one when none exists and create is set.
func loadAuditKey(dbPath, where string, create bool) (key []byte, at string, err error) {
	switch where {
	case keyInFile:
		k, err := readKeyFile(dbPath)
		return k, keyInFile, err
	case keyInKeychain:
		k, err := readKeychainKey(dbPath)
		return k, keyInKeychain, err
	}
	// No anchor names it: use whichever exists, the file first.
	if k, err := readKeyFile(dbPath); err == nil {
		return k, keyInFile, nil
	} else if !errors.Is(err, errNoAuditKey) {
		return nil, "", err
	}
	if keychainUsable() {
		if k, err := readKeychainKey(dbPath); err == nil {
			return k, keyInKeychain, nil
		}
	}
	if !create {
		return nil, "", errNoAuditKey
	}
	k := make([]byte, auditKeyBytes)
	if _, err := io.ReadFull(rand.Reader, k); err != nil {
		return nil, "", fmt.Errorf("create the audit key: %w", err)
	}
	if keychainUsable() {
		if err := keyring.Set(keychainService, keychainAccount(dbPath), hex.EncodeToString(k)); err == nil {
			return k, keyInKeychain, nil
		}
		// An unreachable keychain falls back to the file; the anchor records it.
	}
	if err := writeKeyFile(dbPath, k); err != nil {
		return nil, "", err
	}
	return k, keyInFile, nil
}

func readKeyFile(dbPath string) ([]byte, error) {
	b, err := os.ReadFile(keyFilePath(dbPath))
	if errors.Is(err, os.ErrNotExist) {
		return nil, errNoAuditKey
	}
	if err != nil {
		return nil, fmt.Errorf("read the audit key file: %w", err)
	}
	k, err := hex.DecodeString(string(b))
	if err != nil || len(k) != auditKeyBytes {
		return nil, fmt.Errorf("the audit key file %s is not a key", filepath.Base(keyFilePath(dbPath)))
	}
	return k, nil
}

// writeKeyFile creates the key file with O_EXCL (never replacing a key) and
// mode 0600, and syncs it and its directory before the key is used.
func writeKeyFile(dbPath string, k []byte) error {
	p := keyFilePath(dbPath)
	f, err := os.OpenFile(p, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return fmt.Errorf("create the audit key file: %w", err)
	}
	_, werr := f.WriteString(hex.EncodeToString(k))
	if err := errors.Join(werr, f.Sync(), f.Close()); err != nil {
		return fmt.Errorf("write the audit key file: %w", errors.Join(err, os.Remove(p)))
	}
	return syncDir(filepath.Dir(p))
}

func readKeychainKey(dbPath string) ([]byte, error) {
	v, err := keyring.Get(keychainService, keychainAccount(dbPath))
	if errors.Is(err, keyring.ErrNotFound) {
		return nil, errNoAuditKey
	}
	if err != nil {
		return nil, fmt.Errorf("read the audit key from the OS keychain: %w", err)
	}
	k, err := hex.DecodeString(v)
	if err != nil || len(k) != auditKeyBytes {
		return nil, fmt.Errorf("the OS keychain entry %s/%s is not an audit key", keychainService,
			keychainAccount(dbPath))
	}
	return k, nil
}

// auditKeyError explains a key that the anchor records but that cannot be
// read: the chain cannot be checked or extended without it.
func auditKeyError(dbPath, where string, err error) error {
	name := filepath.Base(dbPath)
	next := "Restore " + filepath.Base(keyFilePath(dbPath)) + " into the data directory from your backup of it. " +
		"To start a new audit chain instead, move " + name + ", " + filepath.Base(anchorPath(dbPath)) +
		" and their -wal/-shm files out of the data directory."
	msg := "The audit chain's key file is missing or unreadable, so the chain cannot be checked or extended."
	if where == keyInKeychain {
		msg = "The audit chain's key could not be read from the OS keychain (service " + keychainService + ")."
		next = "Unlock the OS keychain (on Linux a Secret Service such as gnome-keyring must run in the session) " +
			"and start AgentHub again."
	}
	return &backend.Error{Code: backend.CodeAuditKeyUnavailable, Message: msg, Next: next, Err: err}
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("sync %s: %w", filepath.Base(dir), err)
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil && runtime.GOOS != "windows" { // directories cannot be synced there
		return fmt.Errorf("sync %s: %w", filepath.Base(dir), err)
	}
	return nil
}
