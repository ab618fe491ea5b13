package approval

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sync"
	"time"

	"agenthub/backend"
)

// RuleBrokenPolicy names the trace step of an evaluation under a policy file
// that cannot be read or parsed. Every gated action then asks (fail closed,
// never open), and grants do not apply: a deny rule the file may hold cannot
// be seen.
const RuleBrokenPolicy = "builtin:broken-policy"

// RuleInvalidSubject names the trace step of an action whose subject cannot
// be read: it asks (a secret access is still denied).
const RuleInvalidSubject = "builtin:invalid-subject"

// maxPolicyBytes bounds the policy file; a larger file is broken.
const maxPolicyBytes = 1 << 20

// settle is how recent a file's modification time may be before its cache
// entry is trusted: a second write within the file system's clock
// granularity could keep both the time and the size.
const settle = 2 * time.Second

// Gate is the policy gate of runs ([backend.Gate]). For each request it
// reads the workspace's [PolicyPath] through an os.Root of the workspace,
// maps the action to an [Action] and evaluates it (Deny > Allow > Ask). A
// missing file is [DefaultPolicy]; a broken one makes every action ask.
// Parsed policies are cached per workspace root by size and modification
// time. A Gate is safe for concurrent use.
type Gate struct {
	roots func(workspaceID string) (string, error)
	rules *Rules // the data directory's rules; nil: the repository's only

	mu    sync.Mutex
	cache map[string]cachedPolicy // by workspace root
}

type cachedPolicy struct {
	stamp  policyStamp
	policy *Policy
	err    error
}

// policyStamp identifies a version of the policy file without reading it.
type policyStamp struct {
	exists  bool
	size    int64
	modTime time.Time
}

func (s policyStamp) same(o policyStamp) bool {
	return s.exists == o.exists && s.size == o.size && s.modTime.Equal(o.modTime)
}

// NewGate returns a gate that resolves a workspace id to its absolute root
// with roots (the workspace registry).
func NewGate(roots func(workspaceID string) (root string, err error)) *Gate {
	return &Gate{roots: roots, cache: map[string]cachedPolicy{}}
}

// WithRules makes the gate read each workspace's rules in the data
// directory too (rules.go), after the repository's; it returns g.
func (g *Gate) WithRules(r *Rules) *Gate {
	g.rules = r
	return g
}

// Evaluate implements [backend.Gate].
func (g *Gate) Evaluate(_ context.Context, req backend.GateRequest) backend.PolicyResult {
	a, err := ActionOf(req)
	if err != nil {
		return unreadable(req.Action.Kind, err)
	}
	return g.Decide(req.WorkspaceID, a)
}

// Decide is the gate's decision for an action in a workspace: the policy
// loaded as every gated request loads it (a broken, oversized or symlinked
// file makes everything ask), evaluated, then capped. `policy explain` and
// the API use it, so they cannot disagree with the gate.
func (g *Gate) Decide(workspaceID string, a Action) backend.PolicyResult {
	p, err := g.Policy(workspaceID)
	if err != nil {
		return broken(DefaultPolicy().Evaluate(a), err)
	}
	return capped(p.Evaluate(a), a)
}

// ActionOf maps a tool's gated action to the policy's view of it. A tool's
// Subject is JSON whose field names are those of [Action] (kind, path,
// preimages, command, cwd, method, url…); unknown fields are ignored. The
// action's Kind and the called tool are authoritative; a subject that names
// another kind is an error, so the caller fails closed.
func ActionOf(req backend.GateRequest) (Action, error) {
	bare := Action{Kind: req.Action.Kind, Tool: req.Tool}
	var a Action
	if s := bytes.TrimSpace(req.Action.Subject); len(s) > 0 && !bytes.Equal(s, []byte("null")) {
		if err := json.Unmarshal(s, &a); err != nil {
			return bare, fmt.Errorf("read the subject of %s: %w", req.Tool, err)
		}
	}
	if a.Kind != "" && a.Kind != req.Action.Kind {
		return bare, fmt.Errorf("the subject of %s is a %s, the action a %s", req.Tool, a.Kind, req.Action.Kind)
	}
	a.Kind, a.Tool = req.Action.Kind, req.Tool
	return a, nil
}

// unreadable is the result for an action whose subject cannot be read.
func unreadable(kind backend.ActionKind, err error) backend.PolicyResult {
	v := backend.Ask
	if kind == backend.ActionSecret {
		v = backend.Deny
	}
	return backend.PolicyResult{Verdict: v, Kind: kind, RuleID: RuleInvalidSubject,
		Reason: fmt.Sprintf("%v: %s", err, v),
		Trace:  []backend.TraceStep{{Rule: RuleInvalidSubject, Pattern: err.Error(), Matched: true, Verdict: v}}}
}

// broken turns a default-policy result into the result under a broken
// policy file: built-in denials stay, everything else asks.
func broken(r backend.PolicyResult, err error) backend.PolicyResult {
	step := backend.TraceStep{Rule: RuleBrokenPolicy, Pattern: err.Error(), Matched: true, Verdict: backend.Ask}
	r.Trace = append([]backend.TraceStep{step}, r.Trace...)
	if r.Verdict == backend.Deny {
		r.Reason += " (the workspace policy cannot be used: " + err.Error() + ")"
		return r
	}
	r.Verdict, r.RuleID = backend.Ask, RuleBrokenPolicy
	r.Reason = "the workspace policy cannot be used, so every action asks: " + err.Error()
	return r
}

// capped re-applies the limits no rule may lift (AP6), whatever the
// evaluation said: push, publish and deploy always ask, secrets are denied.
// Evaluate already keeps them; this keeps the gate safe if it ever does not.
func capped(r backend.PolicyResult, a Action) backend.PolicyResult {
	switch {
	case (r.Kind == backend.ActionSecret || a.Kind == backend.ActionSecret) && r.Verdict != backend.Deny:
		r.Verdict, r.Reason = backend.Deny, "secret access is always denied"
	case (r.Kind.AlwaysAsks() || a.Kind.AlwaysAsks()) && r.Verdict == backend.Allow:
		r.Verdict, r.Reason = backend.Ask, fmt.Sprintf("%s always asks", r.Kind)
	}
	return r
}

// Policy returns the parsed policy of a workspace: [DefaultPolicy] without
// a file, an error when the file cannot be read or parsed. Access goes
// through an os.Root of the workspace (the package's dependencies stay the
// standard library, so it does not use the workspace package); the error
// names only workspace-relative paths.
func (g *Gate) Policy(workspaceID string) (*Policy, error) {
	repo, err := g.RepoPolicy(workspaceID)
	if err != nil || g.rules == nil || g.rules.Dir == "" {
		return repo, err
	}
	data, err := g.DataPolicy(workspaceID)
	if err != nil {
		return nil, err
	}
	return merged(repo, data), nil
}

// DataPolicy is the policy of the workspace's rules file in the data
// directory: [DefaultPolicy] without one, an error when it cannot be used.
func (g *Gate) DataPolicy(workspaceID string) (*Policy, error) {
	if g.rules == nil || g.rules.Dir == "" {
		return DefaultPolicy(), nil
	}
	rel, err := DataFile(workspaceID)
	if err != nil {
		return nil, err
	}
	key := "data:" + rel
	stamp, err := statData(g.rules.Dir, path.Base(rel))
	if err != nil {
		return nil, err
	}
	g.mu.Lock()
	c, ok := g.cache[key]
	g.mu.Unlock()
	if ok && c.stamp.same(stamp) && time.Since(stamp.modTime) > settle {
		return c.policy, c.err
	}
	c = cachedPolicy{stamp: stamp, policy: DefaultPolicy()}
	if stamp.exists {
		var text []byte
		if text, c.err = g.rules.ReadData(workspaceID); c.err == nil {
			c.policy, c.err = ParsePolicy(text)
			if c.err != nil {
				c.err = fmt.Errorf("%s in the data directory: %w", rel, c.err)
			}
		}
	}
	g.mu.Lock()
	g.cache[key] = c
	g.mu.Unlock()
	return c.policy, c.err
}

// statData stamps a rules file (name) of the data directory's policy
// folder dir.
func statData(dir, name string) (policyStamp, error) {
	fi, err := os.Lstat(filepath.Join(dir, name))
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return policyStamp{}, nil
	case err != nil:
		return policyStamp{}, fmt.Errorf("read %s/%s in the data directory: %w", DataPolicyDir, name, pathless(err))
	}
	return policyStamp{exists: true, size: fi.Size(), modTime: fi.ModTime()}, nil
}

// merged is the repository's rules followed by the data directory's: the
// verdict does not depend on the order (Deny > Allow > Ask), only the
// trace does. A data rule without an id is named data:class[n], so that no
// trace name points at the wrong file.
func merged(repo, data *Policy) *Policy {
	if data == nil || len(data.Write)+len(data.Shell)+len(data.Network)+len(data.Git)+len(data.MCP)+len(data.Env) == 0 {
		return repo
	}
	out := *repo
	out.Write = slices.Clone(repo.Write)
	for i, r := range data.Write {
		r.ID = dataName("write", i, r.ID)
		out.Write = append(out.Write, r)
	}
	out.Shell = slices.Clone(repo.Shell)
	for i, r := range data.Shell {
		r.ID = dataName("shell", i, r.ID)
		out.Shell = append(out.Shell, r)
	}
	out.Network = slices.Clone(repo.Network)
	for i, r := range data.Network {
		r.ID = dataName("network", i, r.ID)
		out.Network = append(out.Network, r)
	}
	out.Git = slices.Clone(repo.Git)
	for i, r := range data.Git {
		r.ID = dataName("git", i, r.ID)
		out.Git = append(out.Git, r)
	}
	out.MCP = slices.Clone(repo.MCP)
	for i, r := range data.MCP {
		r.ID = dataName("mcp", i, r.ID)
		out.MCP = append(out.MCP, r)
	}
	out.Env = append(slices.Clone(repo.Env), data.Env...)
	return &out
}

func dataName(class string, i int, id string) string {
	if id != "" {
		return id
	}
	return "data:" + ruleName(class, i, "")
}

// RepoPolicy is the policy of the repository's [PolicyPath] alone.
func (g *Gate) RepoPolicy(workspaceID string) (*Policy, error) {
	root, err := g.roots(workspaceID)
	if err != nil {
		return nil, fmt.Errorf("resolve workspace %s: %w", workspaceID, err)
	}
	r, err := os.OpenRoot(root)
	if err != nil {
		return nil, fmt.Errorf("open the workspace: %w", pathless(err))
	}
	defer r.Close()
	stamp, err := statPolicy(r)
	if err != nil {
		return nil, err
	}
	g.mu.Lock()
	c, ok := g.cache[root]
	g.mu.Unlock()
	if ok && c.stamp.same(stamp) && time.Since(stamp.modTime) > settle {
		return c.policy, c.err
	}
	c = cachedPolicy{stamp: stamp, policy: DefaultPolicy()}
	if stamp.exists {
		c.policy, c.err = readPolicy(r)
	}
	g.mu.Lock()
	g.cache[root] = c
	g.mu.Unlock()
	return c.policy, c.err
}

// statPolicy stamps the policy file. The policy is never read through a
// symlink: an agent that can create links must not be able to point the
// policy at a file it wrote.
func statPolicy(r *os.Root) (policyStamp, error) {
	for _, p := range []string{policyDir, PolicyPath} {
		fi, err := r.Lstat(p)
		switch {
		case errors.Is(err, fs.ErrNotExist):
			return policyStamp{}, nil
		case err != nil:
			return policyStamp{}, fmt.Errorf("read %s: %w", PolicyPath, pathless(err))
		}
		if err := policyEntry(p, fi); err != nil {
			return policyStamp{}, err
		}
		if p == PolicyPath {
			return policyStamp{exists: true, size: fi.Size(), modTime: fi.ModTime()}, nil
		}
	}
	return policyStamp{}, nil
}

// policyEntry refuses what the policy is never read or written through: a
// symbolic link (an agent that can create links must not point the policy
// at a file it wrote), a .agenthub that is not a directory, a policy file
// that is not a regular file or is over [maxPolicyBytes]. The gate, the
// CLI, the API and "always allow" all refuse with these words.
func policyEntry(p string, fi fs.FileInfo) error {
	switch {
	case fi.Mode()&fs.ModeSymlink != 0:
		return fmt.Errorf("%s: %s is a symbolic link, which is never followed; replace it with a real %s",
			PolicyPath, p, map[bool]string{true: "directory", false: "file"}[p == policyDir])
	case p == policyDir && !fi.IsDir():
		return fmt.Errorf("%s: %s is not a directory", PolicyPath, p)
	case p == PolicyPath && !fi.Mode().IsRegular():
		return fmt.Errorf("%s: not a regular file", PolicyPath)
	case p == PolicyPath && fi.Size() > maxPolicyBytes:
		return errPolicyTooLarge
	}
	return nil
}

var errPolicyTooLarge = fmt.Errorf("%s: larger than %d bytes (1 MiB), the most the gate reads", PolicyPath, maxPolicyBytes)

// ReadPolicy parses policy text from r as the gate does: more than
// [maxPolicyBytes] is an error, never a truncated policy. `policy check
// --file` uses it.
func ReadPolicy(r io.Reader) (*Policy, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxPolicyBytes+1))
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", PolicyPath, pathless(err))
	}
	if len(data) > maxPolicyBytes {
		return nil, errPolicyTooLarge
	}
	return ParsePolicy(data)
}

// readPolicy reads and parses the file statPolicy found, bounded in size
// even if it grew in between.
func readPolicy(r *os.Root) (*Policy, error) {
	f, err := r.Open(PolicyPath)
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", PolicyPath, pathless(err))
	}
	defer f.Close()
	return ReadPolicy(f)
}

// pathless drops the path of an *os.PathError, which may be the absolute
// workspace root: messages never show machine paths.
func pathless(err error) error {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err
	}
	return err
}
