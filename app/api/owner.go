package api

import (
	"fmt"

	"agenthub/backend"
)

// Role is how a process relates to the data directory's one run owner, the
// process holding EngineLock that runs, recovers and decides runs.
type Role int

const (
	// RoleAuto owns the runs when no other process does, else only reads
	// (the window, and commands run in-process by tests).
	RoleAuto Role = iota
	// RoleOwner must own the runs: `agenthub engine` fails when another
	// process already does.
	RoleOwner
	// RoleReader never owns, never recovers, never starts or decides
	// anything: a read-only command run while no engine is up must not
	// execute an approved action a crash left behind (issue 16).
	RoleReader
)

// EngineLock is the lock file whose holder owns the data directory's runs.
const EngineLock = "engine.lock"

// IsOwner reports whether this core owns the data directory's runs (it
// holds EngineLock and recovered at Open).
func (c *Core) IsOwner() bool { return c.writer != nil }

// Opened is closed once Open has finished, successfully or not.
func (c *Core) Opened() <-chan struct{} { return c.opened }

// View returns a core over the same opened services that acts through
// another surface: the engine runs a forwarded CLI command over a view so
// that its audit entries say "cli", and the command's Close releases
// nothing. Call it only after Open succeeded.
func (c *Core) View(surface backend.Surface) *Core {
	cfg := c.cfg
	cfg.Surface = surface
	v := &Core{cfg: cfg, store: c.store, engine: c.engine, prof: c.prof, opened: c.opened,
		openErr: c.openErr, actor: c.actor, log: c.log, writer: c.writer, busy: c.busy, changes: c.changes, view: true}
	v.openOnce.Do(func() {}) // opened is already closed: a view never opens
	return v
}

func errNoOwner(home string) error {
	return &backend.Error{Code: backend.CodeConflict,
		Message: fmt.Sprintf("no AgentHub engine is running for the data directory %s, and this command only reads", DisplayPath(home)),
		Next:    "Start it with: agenthub engine start (any command that changes runs starts it too)."}
}

func errOwnerExists(home string, err error) error {
	return &backend.Error{Code: backend.CodeConflict, Err: err,
		Message: fmt.Sprintf("another AgentHub process already runs the runs of the data directory %s", DisplayPath(home)),
		Next:    "Use it (agenthub engine status), or stop it first: agenthub engine stop."}
}
