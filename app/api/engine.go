package api

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"agenthub/backend"
	"agenthub/backend/approval"
	"agenthub/backend/engine"
	"agenthub/backend/proc"
	"agenthub/backend/redact"
	"agenthub/backend/runtime/script"
	"agenthub/backend/store"
	"agenthub/backend/tools"
)

// DemoProfile is the bundled scripted profile, the default when nothing else
// is configured.
const DemoProfile = "demo"

// playbookPrefix names the profiles of playbooks given on the command line.
const playbookPrefix = "playbook:"

// demoPace streams the demo's words at a readable speed.
const demoPace = 15 * time.Millisecond

// shutdownWait bounds how long closing waits for runs to detach.
const shutdownWait = 15 * time.Second

// openEngine builds the engine over the opened store, registers every
// profile a stored run may name, and recovers runs from the last process.
func (c *Core) openEngine(ctx context.Context, st *store.Store) error {
	demo, err := script.Demo()
	if err != nil {
		return fmt.Errorf("load the demo playbook: %w", err)
	}
	model := script.NewModel(demo)
	model.Pace = demoPace
	// Everything the store persists (events, messages, tool results,
	// previews, errors) is redacted first; the redactor knows this process's
	// secret environment variables.
	st.SetRedactor(redact.NewFromEnviron(os.Environ()))
	c.engine = engine.New(engine.Config{
		Store:       st,
		Gate:        approval.NewGate(c.workspaceRoot).WithRules(c.rules()),
		Rules:       c.rules(), // policy.go: where "always allow" writes
		Tools:       withRuntimeTools(tools.New(tools.Config{CheckpointDir: filepath.Join(c.cfg.Home, "checkpoints")})),
		Profiles:    map[string]engine.Profile{DemoProfile: scriptProfile(model)},
		Default:     DemoProfile,
		GlobalLimit: c.cfg.MaxRuns,
		Roots:       c.workspaceRoot,
		RunRoots:    c.runRoot, // a worktree run works in its worktree (worktrees.go)
		// run.diff.ready counts lines against the pre-images there, and
		// says what a worktree run changed on its branch (changeset.go).
		Checkpoints: filepath.Join(c.cfg.Home, "checkpoints"),
		BranchDiff:  c.branchDiff,
		Sink:        c.cfg.Sink,
		Log:         c.log,
	})
	c.loadProfiles()
	if err := c.loadPlaybooks(); err != nil {
		return err
	}
	return c.recoverIfWriter(ctx)
}

// recoverIfWriter makes this process the data directory's one run writer
// when no other process is, and then recovers the runs the last writer
// left. Another live writer (the window, `agenthub serve`, a CLI run) owns
// its runs: recovering here would mark them interrupted under its feet, and
// its next event would collide with ours. Then this process only reads, and
// the calls that would change a run say where to make them.
func (c *Core) recoverIfWriter(ctx context.Context) error {
	if c.cfg.Role == RoleReader {
		c.busy = errNoOwner(c.cfg.Home)
		return nil
	}
	lock, err := TryLock(c.cfg.Home, EngineLock)
	if err != nil && c.cfg.Role == RoleOwner {
		return errOwnerExists(c.cfg.Home, err)
	}
	if err != nil {
		c.log.Info("another AgentHub process runs this data directory's runs; this one only reads", "err", err)
		c.busy = &backend.Error{Code: backend.CodeConflict, Err: err,
			Message: "another AgentHub process (the window, agenthub serve or a CLI run) is running the runs of this data directory",
			Next:    "Make this change there, or close it and try again."}
		return nil
	}
	c.writer = lock
	// What a dead writer's commands and agent CLIs left running (recorded by
	// pid and start time) dies before any run resumes.
	if killed, err := proc.Adopt(filepath.Join(c.cfg.Home, "proc")); err != nil || killed > 0 {
		c.log.Warn("killed processes a previous AgentHub left running", "killed", killed, "err", err)
	}
	if err := c.engine.Recover(ctx); err != nil {
		return fmt.Errorf("recover runs: %w", err)
	}
	return nil
}

// writable is nil when this process may start, decide, cancel or resume
// runs: it is the data directory's writer.
func (c *Core) writable() error {
	if c.busy != nil {
		return c.busy
	}
	return nil
}

func scriptProfile(m *script.Model) engine.Profile {
	return engine.Profile{Runtime: "script", Model: m, Stop: engine.DefaultStop, Scripted: true,
		Executor: engine.Executor(m.Playbook().Executor)}
}

// workspaceRoot resolves a workspace id to its absolute root for tools.
func (c *Core) workspaceRoot(id string) (string, error) {
	ws, err := c.store.Workspace(context.Background(), id)
	if err != nil {
		return "", err
	}
	return ws.Path, nil
}

// AddPlaybook registers a playbook file as a scripted profile and returns
// its name. The text is kept in the data directory under its hash, so a run
// that waits for approval can continue in a later process.
func (c *Core) AddPlaybook(text []byte) (string, error) {
	pb, err := script.Parse(text)
	if err != nil {
		return "", &backend.Error{Code: backend.CodeInvalidInput, Message: err.Error(), Err: err}
	}
	sum := sha256.Sum256(text)
	id := hex.EncodeToString(sum[:8])
	dir := filepath.Join(c.cfg.Home, "playbooks")
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return "", fmt.Errorf("keep the playbook: %w", err)
	}
	if err := writeAtomic(filepath.Join(dir, id+".toml"), text); err != nil {
		return "", fmt.Errorf("keep the playbook: %w", err)
	}
	name := playbookPrefix + id
	c.engine.AddProfile(name, scriptProfile(script.NewModel(pb)))
	return name, nil
}

func (c *Core) loadPlaybooks() error {
	files, err := filepath.Glob(filepath.Join(c.cfg.Home, "playbooks", "*.toml"))
	if err != nil {
		return err
	}
	for _, f := range files {
		text, err := os.ReadFile(f)
		if err != nil {
			return fmt.Errorf("read playbook: %w", err)
		}
		pb, err := script.Parse(text)
		if err != nil {
			c.log.Warn("skip a stored playbook that no longer parses", "file", filepath.Base(f), "err", err)
			continue
		}
		name := playbookPrefix + strings.TrimSuffix(filepath.Base(f), ".toml")
		c.engine.AddProfile(name, scriptProfile(script.NewModel(pb)))
	}
	return nil
}

// writeAtomic writes data to a temp file beside path and renames it over.
func writeAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".tmp-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if _, err := tmp.Write(data); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Sync(); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), path)
}

// MaxRunsFromEnv reads AGENTHUB_MAX_RUNS, the global cap on concurrent runs.
func MaxRunsFromEnv(getenv func(string) string) (int, error) {
	v := getenv("AGENTHUB_MAX_RUNS")
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 1 {
		return 0, backend.Errorf(backend.CodeInvalidInput, "AGENTHUB_MAX_RUNS=%q: use a whole number of at least 1", v)
	}
	return n, nil
}
