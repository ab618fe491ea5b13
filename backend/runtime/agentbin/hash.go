package agentbin

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"syscall"
	"time"

	"agenthub/backend/store"
)

// Cache keeps program hashes between processes: every `agenthub run` is a
// new process, and hashing a native CLI of several hundred megabytes took
// 0.6 s each time. The store implements it.
type Cache interface {
	ProgramHash(ctx context.Context, f store.FileStamp) (string, error)
	RememberProgramHash(ctx context.Context, f store.FileStamp, sum string) error
}

// hashes is this process's memory of program hashes, by the whole stamp,
// and the cache beyond it.
var hashes = struct {
	sync.Mutex
	m     map[store.FileStamp]string
	cache Cache
	gen   int
}{m: map[store.FileStamp]string{}}

// cacheTimeout bounds one look-up or record in the cache: a store that is
// slow or closing costs a hash, never a run.
const cacheTimeout = 5 * time.Second

// UseCache makes c the cache of every later Hash, until the returned
// release is called (release leaves a newer cache in place).
func UseCache(c Cache) (release func()) {
	hashes.Lock()
	defer hashes.Unlock()
	hashes.gen++
	gen := hashes.gen
	hashes.cache = c
	return func() {
		hashes.Lock()
		defer hashes.Unlock()
		if hashes.gen == gen {
			hashes.cache = nil
		}
	}
}

// Hash is the hex SHA-256 of the file path leads to. A hash is reused only
// while the file keeps its size, modification time, inode and status-change
// time: replacing the file (a new inode) or rewriting it in place (a new
// status-change time, which no user call can set back) hashes it again,
// even with the size and modification time kept.
func Hash(path string) (string, error) {
	real, err := filepath.EvalSymlinks(path)
	if err != nil {
		return "", err
	}
	f, err := os.Open(real)
	if err != nil {
		return "", err
	}
	defer f.Close()
	// The stamp is the open file's, so the hash and the stamp are of the
	// same file even if the path is replaced meanwhile.
	stamp, err := stampOf(f, real)
	if err != nil {
		return "", err
	}
	hashes.Lock()
	sum, ok := hashes.m[stamp]
	cache := hashes.cache
	hashes.Unlock()
	if ok {
		return sum, nil
	}
	if cache != nil {
		ctx, cancel := context.WithTimeout(context.Background(), cacheTimeout)
		sum, err := cache.ProgramHash(ctx, stamp)
		cancel()
		if err != nil {
			slog.Warn("the program hash cache could not be read; hashing the program", "err", err)
		} else if sum != "" {
			remember(stamp, sum)
			return sum, nil
		}
	}
	h := sha256.New()
	if _, err := io.Copy(h, f); err != nil {
		return "", fmt.Errorf("read %s: %w", filepath.Base(real), err)
	}
	sum = hex.EncodeToString(h.Sum(nil))
	// A file written to while it was read is not remembered: its stamp
	// after the read names content the hash may not cover.
	if after, err := stampOf(f, real); err != nil || after != stamp {
		return sum, nil
	}
	remember(stamp, sum)
	if cache != nil {
		ctx, cancel := context.WithTimeout(context.Background(), cacheTimeout)
		if err := cache.RememberProgramHash(ctx, stamp, sum); err != nil {
			slog.Warn("the program hash could not be cached; the next run hashes it again", "err", err)
		}
		cancel()
	}
	return sum, nil
}

func remember(stamp store.FileStamp, sum string) {
	hashes.Lock()
	hashes.m[stamp] = sum
	hashes.Unlock()
}

// stampOf is the stamp of the open file f, found at path.
func stampOf(f *os.File, path string) (store.FileStamp, error) {
	fi, err := f.Stat()
	if err != nil {
		return store.FileStamp{}, err
	}
	st, ok := fi.Sys().(*syscall.Stat_t)
	if !ok {
		return store.FileStamp{}, fmt.Errorf("%s: no inode", filepath.Base(path))
	}
	return store.FileStamp{Path: path, Size: fi.Size(), MTime: fi.ModTime().UnixNano(), Inode: st.Ino,
		CTime: ctimeOf(st)}, nil
}
