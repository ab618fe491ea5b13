package api

import (
	"context"
	"fmt"
	"log/slog"
	"os/user"
	"path/filepath"
	"sync"
	"time"

	"agenthub/backend"
	"agenthub/backend/engine"
	"agenthub/backend/llm/local"
	"agenthub/backend/runtime/agentbin"
	"agenthub/backend/store"
)

// Config says where the data lives and which surface the user acts through.
type Config struct {
	Home    string          // data directory (absolute)
	Version string          // build version
	Surface backend.Surface // window | browser | cli
	MaxRuns int             // global cap on concurrent runs; 0 = the engine's default (4)
	// LocalServers are where SystemAPI.LocalModels looks for local model
	// servers; nil = their standard loopback ports (local.Defaults).
	LocalServers []local.Probe
	// Sink, when set, sees every committed event (the window's bridge).
	Sink backend.Sink
	// Role says whether this process must own the data directory's runs
	// (the engine), must never touch them (a read-only command), or owns
	// them when nobody else does (the default, see owner.go).
	Role Role
}

// Core owns the opened services. Facades are thin views over it.
type Core struct {
	cfg    Config
	store  *store.Store
	engine *engine.Engine
	// prof holds the registered profiles (the default first) and the broken
	// profile files; watch.go reloads it when the files change.
	prof *profileSet
	// stopWatch ends the file watcher of the run owner (watch.go).
	stopWatch func()
	// opened is closed once Open has finished, with openErr its outcome.
	opened   chan struct{}
	openOnce sync.Once
	openErr  error
	actor    string
	log      *slog.Logger
	// writer is the engine lock of the data directory's one run writer;
	// busy, when another process holds it, is the error for changing runs.
	writer *Lock
	busy   error

	// PickDirectory opens the native directory dialog; only the window sets it.
	PickDirectory func() (string, error)
	// Notify sends a desktop notification; only the window sets it.
	Notify func(heading, body string) error

	openReq opener // what the window was asked to show (open.go)

	// changes carries system.changed to every-run subscribers (changes.go).
	changes *changeHub

	// view is set on a core made by [Core.View]: it shares the opened
	// services and its Close releases nothing.
	view bool

	// releaseHashes stops agent CLI hashes being cached in this core's
	// store (agentbin.UseCache), before the store closes.
	releaseHashes func()
}

// DBFile is the SQLite database's name inside the data directory.
const DBFile = "agenthub.db"

// New returns an unopened core; facades may be built over it before Open,
// which the window does so that its single-instance check runs before the
// database is touched.
func New(cfg Config) *Core {
	return &Core{cfg: cfg, actor: osUser(), log: slog.Default(), opened: make(chan struct{}), changes: newChangeHub(), prof: &profileSet{}}
}

// Open prepares the data directory and opens the store (running migrations).
func Open(ctx context.Context, cfg Config) (*Core, error) {
	c := New(cfg)
	return c, c.Open(ctx)
}

// Open prepares the data directory and opens the store. Calls that arrive
// before it finishes wait for it (see [Core.db]).
func (c *Core) Open(ctx context.Context) error {
	err := c.open(ctx)
	if err == nil && c.IsOwner() {
		c.watchFiles() // watch.go: profiles, policy and workspace folders, live
	}
	c.openOnce.Do(func() {
		c.openErr = err
		close(c.opened)
	})
	return err
}

func (c *Core) open(ctx context.Context) error {
	if err := EnsureHome(c.cfg.Home); err != nil {
		return err
	}
	st, err := store.Open(ctx, filepath.Join(c.cfg.Home, DBFile))
	if err != nil {
		return fmt.Errorf("open the database in %s: %w", DisplayPath(c.cfg.Home), err)
	}
	c.store = st
	c.releaseHashes = agentbin.UseCache(st)
	if err := c.openEngine(ctx, st); err != nil {
		c.releaseHashes()
		st.Close()
		c.store = nil
		return err
	}
	return nil
}

// SetSink sets the extra subscriber of committed events (the window's
// bridge); call it before Open.
func (c *Core) SetSink(s backend.Sink) { c.cfg.Sink = s }

// Close detaches live runs (the next start recovers them) and releases the
// store.
func (c *Core) Close() error {
	if c.view || c.store == nil {
		return nil
	}
	if c.stopWatch != nil {
		c.stopWatch()
	}
	if c.engine != nil {
		ctx, cancel := context.WithTimeout(context.Background(), shutdownWait)
		defer cancel()
		if err := c.engine.Shutdown(ctx); err != nil {
			c.log.Warn("runs did not detach in time", "err", err)
		}
	}
	if c.releaseHashes != nil {
		c.releaseHashes()
	}
	err := c.store.Close()
	c.writer.Release()
	return err
}

// Engine exposes the engine to sibling transports (httpapi, cli).
func (c *Core) Engine() *engine.Engine { return c.engine }

// Store exposes the store to sibling transports (httpapi, cli).
func (c *Core) Store() *store.Store { return c.store }

// openWait bounds how long a call waits for the database to open.
const openWait = 30 * time.Second

// db is the opened store. The window's page can call before OnStartup has
// opened the database, so a call waits for Open, and fails with not_ready if
// it takes too long or with Open's own error if that failed.
func (c *Core) db() (*store.Store, error) {
	select {
	case <-c.opened:
	case <-time.After(openWait):
		return nil, backend.Errorf(backend.CodeNotReady, "AgentHub is still opening its database")
	}
	if c.openErr != nil {
		return nil, c.openErr
	}
	return c.store, nil
}

// Config returns the configuration the core was opened with.
func (c *Core) Config() Config { return c.cfg }

// By is the actor and surface recorded in audit entries for user actions.
func (c *Core) By() store.By { return store.By{Actor: c.actor, Surface: c.cfg.Surface} }

func osUser() string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return "local-user"
}
