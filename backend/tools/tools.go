package tools

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"sync"

	"github.com/google/jsonschema-go/jsonschema"

	"agenthub/backend"
	"agenthub/workspace"
)

// Tool names, as the model calls them.
const (
	ListDir    = "list_dir"
	ReadFile   = "read_file"
	WriteFile  = "write_file"
	EditFile   = "edit_file"
	DeleteFile = "delete_file"
	RunShell   = "run_shell"
	GitStatus  = "git_status"
	GitDiff    = "git_diff"
	GitCommit  = "git_commit"
	Delegate   = "delegate"
	Search     = "search"
	FetchURL   = "fetch_url"
)

// Config configures the built-in tools.
type Config struct {
	// CheckpointDir holds the pre-images of every write (workspace.CheckpointStore),
	// in AgentHub's data directory, never inside a workspace. Required by the
	// mutating tools; it is created on first use.
	CheckpointDir string
	// CheckpointBytes bounds the checkpoint store; zero means
	// workspace.DefaultCheckpointBytes.
	CheckpointBytes int64
}

// New returns every built-in tool by name. The mutating tools share one
// checkpoint store and one table of pending proposals.
func New(cfg Config) map[string]backend.Tool {
	s := &shared{cfg: cfg, plans: newPlans(maxPlans)}
	return map[string]backend.Tool{
		ListDir:    listDir{},
		ReadFile:   readFile{},
		WriteFile:  &mutator[writeArgs]{s: s, op: writeOp{}},
		EditFile:   &mutator[editArgs]{s: s, op: editOp{}},
		DeleteFile: &mutator[deleteArgs]{s: s, op: deleteOp{}},
		RunShell:   runShell{caches: cacheRoot(cfg)},
		GitStatus:  gitStatus{},
		GitDiff:    gitDiff{},
		GitCommit:  gitCommit{},
		GitPush:    gitPush{},
		Delegate:   delegate{},
		Search:     search{},
		FetchURL:   fetchURL{},

		PublishArtifact: publishArtifact{}, // artifact.go
		Screenshot:      screenshot{},      // screenshot.go
	}
}

// shared is the state of the mutating tools.
type shared struct {
	cfg   Config
	plans *plans

	mu    sync.Mutex
	store *workspace.CheckpointStore
}

// checkpoints opens the checkpoint store on first use, so New cannot fail; a
// failure is retried by the next write.
func (s *shared) checkpoints() (*workspace.CheckpointStore, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.store != nil {
		return s.store, nil
	}
	if s.cfg.CheckpointDir == "" {
		return nil, errors.New("no checkpoint directory configured")
	}
	st, err := workspace.NewCheckpointStore(s.cfg.CheckpointDir, s.cfg.CheckpointBytes)
	if err != nil {
		// The store lives in the data directory, usually under home.
		return nil, errors.New(workspace.Scrub(err.Error(), s.cfg.CheckpointDir, homeDir()))
	}
	s.store = st
	return st, nil
}

// argSchema is a tool's argument schema, generated from its Go argument type
// and resolved once for validation. A lazySchema is built on first use
// (Raw, or a call's decode): generating and resolving every tool's schema
// by reflection at package initialisation was a sixth of the CPU of
// `agenthub version`, which never uses one (docs/PERFORMANCE.md).
type argSchema struct {
	once     sync.Once
	build    func() (json.RawMessage, *jsonschema.Resolved)
	raw      json.RawMessage
	resolved *jsonschema.Resolved
}

// Raw is the schema's JSON, as sent to the model.
func (s *argSchema) Raw() json.RawMessage {
	s.load()
	return s.raw
}

func (s *argSchema) load() {
	s.once.Do(func() {
		s.raw, s.resolved = s.build()
	})
}

// lazySchema returns the schema of T, built on first use. It panics only on
// a programming error in a static type, which the tests catch (every tool's
// Spec is read by them).
func lazySchema[T any](tweak func(*jsonschema.Schema)) *argSchema {
	return &argSchema{build: func() (json.RawMessage, *jsonschema.Resolved) { return buildSchema[T](tweak) }}
}

func buildSchema[T any](tweak func(*jsonschema.Schema)) (json.RawMessage, *jsonschema.Resolved) {
	s, err := jsonschema.For[T](nil)
	if err != nil {
		panic(fmt.Sprintf("tools: schema of %T: %v", *new(T), err))
	}
	if s.Properties == nil {
		// Some providers reject an object schema without "properties".
		s.Properties = map[string]*jsonschema.Schema{}
	}
	if tweak != nil {
		tweak(s)
	}
	raw, err := json.Marshal(s)
	if err != nil {
		panic(fmt.Sprintf("tools: marshal schema of %T: %v", *new(T), err))
	}
	r, err := s.Resolve(nil)
	if err != nil {
		panic(fmt.Sprintf("tools: resolve schema of %T: %v", *new(T), err))
	}
	return raw, r
}

// prop returns a property of s, so tweaks read as one line each.
func prop(s *jsonschema.Schema, name string) *jsonschema.Schema { return s.Properties[name] }

// decode validates raw against the schema and decodes it into T. The error
// is written for the model: it says what is wrong and what is expected.
func decode[T any](tool string, sc *argSchema, raw json.RawMessage) (T, error) {
	var zero T
	raw = bytes.TrimSpace(raw)
	if len(raw) == 0 || bytes.Equal(raw, []byte("null")) {
		raw = []byte("{}")
	}
	sc.load()
	var inst any
	if err := json.Unmarshal(raw, &inst); err != nil {
		return zero, fmt.Errorf("invalid arguments for %s: not valid JSON (%v); send a JSON object matching the schema %s",
			tool, err, sc.raw)
	}
	if err := sc.resolved.Validate(inst); err != nil {
		return zero, fmt.Errorf("invalid arguments for %s: %s; the schema is %s", tool, validation(err), sc.raw)
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.DisallowUnknownFields()
	var v T
	if err := dec.Decode(&v); err != nil {
		return zero, fmt.Errorf("invalid arguments for %s: %v; the schema is %s", tool, err, sc.raw)
	}
	return v, nil
}

// validation shortens jsonschema's messages ("validating root: validating
// /properties/path: type: ...") to "path: type: ...".
func validation(err error) string {
	msg := strings.ReplaceAll(err.Error(), "validating root: ", "")
	return propertyPrefix.ReplaceAllString(msg, "$1: ")
}

var propertyPrefix = regexp.MustCompile(`validating /properties/([^:/]+): `)

// scrubber rewrites the workspace root to "." and the home directory to "~",
// in both the spelling the run uses and the one with symlinks resolved (a
// shell's pwd prints the latter).
type scrubber struct{ root, realRoot, home, realHome string }

func newScrubber(root string) scrubber {
	s := scrubber{root: root, home: homeDir()}
	if r, err := filepath.EvalSymlinks(root); err == nil && r != root {
		s.realRoot = r
	}
	if h, err := filepath.EvalSymlinks(s.home); err == nil && h != s.home {
		s.realHome = h
	}
	return s
}

func (s scrubber) text(t string) string {
	if s.realRoot != "" || s.realHome != "" {
		t = workspace.Scrub(t, s.realRoot, s.realHome)
	}
	return workspace.Scrub(t, s.root, s.home)
}

func homeDir() string {
	h, err := os.UserHomeDir()
	if err != nil {
		return ""
	}
	return h
}

// failure is a tool error the model sees, scrubbed of machine paths.
func failure(env backend.ToolEnv, format string, args ...any) backend.ToolResult {
	return backend.ToolResult{Content: newScrubber(env.WorkspaceRoot).text(fmt.Sprintf(format, args...)), IsError: true}
}

// success is a tool result, scrubbed of machine paths.
func success(env backend.ToolEnv, content string) backend.ToolResult {
	return backend.ToolResult{Content: newScrubber(env.WorkspaceRoot).text(content)}
}

// errNoWorkspace is the one infrastructure error every file tool shares.
var errNoWorkspace = errors.New("the run has no workspace root")

// openWorkspace opens the rooted file access of the run's workspace. Its
// error never names the root.
func openWorkspace(env backend.ToolEnv) (*workspace.FS, error) {
	if env.WorkspaceRoot == "" {
		return nil, errNoWorkspace
	}
	w, err := workspace.Open(env.WorkspaceRoot)
	if err != nil {
		return nil, errors.New(newScrubber(env.WorkspaceRoot).text(err.Error()))
	}
	return w, nil
}

// pathMessage explains a path error to the model. Errors from workspace
// already name the path workspace-relative and say why.
func pathMessage(err error) string {
	var pe *workspace.PathError
	switch {
	case errors.Is(err, workspace.ErrOutsideRoot):
		return err.Error() + " (only paths inside the workspace, relative to its root, can be used)"
	case errors.Is(err, workspace.ErrProtected):
		return err.Error() + "; agents may not change this path"
	case errors.Is(err, fs.ErrNotExist) && errors.As(err, &pe):
		return fmt.Sprintf("%s does not exist; check the path with list_dir", pe.Path)
	case errors.Is(err, fs.ErrNotExist):
		return err.Error() + "; check the path with list_dir"
	}
	return err.Error()
}

// secretAction describes an access to a secret path for the gate, which
// denies it (run-model.md §9.1). It shows only the workspace-relative path.
func secretAction(tool, verb, path, pattern string) *backend.GatedAction {
	preview, _ := json.Marshal(map[string]string{"tool": tool, "path": path, "pattern": pattern,
		"reason": "secret files are never " + verb + " by agents"})
	subject, _ := json.Marshal(map[string]string{"kind": string(backend.ActionSecret), "tool": tool, "path": path})
	return &backend.GatedAction{Kind: backend.ActionSecret, Title: fmt.Sprintf("%s: secret file %s", tool, path),
		Risk: backend.RiskHigh, Preview: preview, Subject: subject}
}
