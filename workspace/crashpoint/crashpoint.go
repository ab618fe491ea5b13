// Package crashpoint is the crash suite's deterministic fault hook: the
// effect paths (workspace staging, renames, checkpoints) and the store's
// commit call [Hit] at every point where a crash or a failed write matters.
// With AGENTHUB_CRASHPOINT unset, Hit is one atomic load and returns nil.
//
// AGENTHUB_CRASHPOINT=N makes the process exit at the Nth hit (exit code
// [ExitCode], no deferred function runs, like a kill -9 for everything on
// disk); N:fail makes the Nth hit return [ErrInjected] instead, which the
// caller treats like the failed write, fsync or rename it stands for.
// AGENTHUB_CRASHPOINT_LOG names a file each hit is appended to ("N name"),
// so a dry run counts the points of a workload and a sweep can name the
// point it crashed at. AGENTHUB_CRASHPOINT=@NAME exits at the first hit of
// the point NAME, for a workload whose count before it varies (a process
// with background commits). Only tests set these variables.
//
// It imports the standard library only, so every layer may call it.
package crashpoint

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
)

// ExitCode is the exit status of a process stopped at a crash point.
const ExitCode = 77

// ErrInjected is the fault a "fail" crash point returns.
var ErrInjected = errors.New("crashpoint: injected fault")

const (
	envAt  = "AGENTHUB_CRASHPOINT"
	envLog = "AGENTHUB_CRASHPOINT_LOG"
)

var (
	armed atomic.Bool
	count atomic.Int64
	cfg   struct {
		at   int64
		fail bool
		name string
		log  *os.File
		mu   sync.Mutex
	}
)

func init() {
	at, logPath := os.Getenv(envAt), os.Getenv(envLog)
	if at == "" && logPath == "" {
		return
	}
	if name, ok := strings.CutPrefix(at, "@"); ok && name != "" {
		cfg.name = name // the first hit of this name exits
		at = ""
	}
	if at != "" {
		n, mode, _ := strings.Cut(at, ":")
		v, err := strconv.ParseInt(n, 10, 64)
		if err != nil || v < 0 || (mode != "" && mode != "fail" && mode != "exit") {
			fmt.Fprintf(os.Stderr, "%s=%q: want N, N:exit or N:fail\n", envAt, at)
			os.Exit(2)
		}
		cfg.at, cfg.fail = v, mode == "fail"
	}
	if logPath != "" {
		f, err := os.OpenFile(logPath, os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			fmt.Fprintf(os.Stderr, "%s: %v\n", envLog, err)
			os.Exit(2)
		}
		cfg.log = f
	}
	armed.Store(true)
}

// Hit marks one crash point. It returns ErrInjected (wrapped with the point's
// name and number) when this is the armed failing point, exits the process
// when it is the armed crashing point, and returns nil otherwise.
func Hit(name string) error {
	if !armed.Load() {
		return nil
	}
	n := count.Add(1)
	if cfg.log != nil {
		cfg.mu.Lock()
		_, _ = fmt.Fprintf(cfg.log, "%d %s\n", n, name)
		cfg.mu.Unlock()
	}
	if cfg.name != "" && name == cfg.name {
		os.Exit(ExitCode)
	}
	if n != cfg.at {
		return nil
	}
	if cfg.fail {
		return fmt.Errorf("%s (point %d): %w", name, n, ErrInjected)
	}
	os.Exit(ExitCode)
	return nil
}
