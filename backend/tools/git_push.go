package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"agenthub/backend"
	"agenthub/backend/proc"
	"agenthub/workspace/git"
	"agenthub/workspace/worktree"
)

// GitPush is the tool that pushes the run's branch.
const GitPush = "git_push"

// GitRunner is the git runner of the process-owning layer, for the app's
// worktree glue (only backend/proc starts processes).
func GitRunner() git.Runner { return runGit }

type gitPushArgs struct {
	Remote      string `json:"remote,omitempty" jsonschema:"the configured remote to push to; default origin"`
	PullRequest bool   `json:"pull_request,omitempty" jsonschema:"also open a pull request with the GitHub CLI (gh), when it is installed and authenticated"`
}

var gitPushSchema = lazySchema[gitPushArgs](nil)

const gitPushDescription = `Push the current branch of the workspace (a worktree run's own branch) to a ` +
	`configured git remote. Always asks the user first, showing the exact commits; the push sends exactly ` +
	`that range and nothing is pushed when the branch or the remote moved since. Never force-pushes over ` +
	`someone else's commits. With pull_request, also opens a pull request through the GitHub CLI when it is ` +
	`installed and authenticated.`

// gitPush pushes a branch. Its subject binds the remote, the branch, the
// remote's tip (From) and the local tip (To): a commit added after the
// approval, or a remote that moved, is drift, and the push itself is
// leased on From.
type gitPush struct{}

// pushPreview is what the reviewer approves.
type pushPreview struct {
	worktree.PushPlan
	PullRequest bool   `json:"pullRequest,omitempty"`
	GH          string `json:"gh,omitempty"` // the GitHub CLI's state when a pull request is asked for
}

func (gitPush) Spec() backend.ToolSpec {
	return backend.ToolSpec{Name: GitPush, Description: gitPushDescription, Schema: gitPushSchema.Raw()}
}

func pushManager() *worktree.Manager {
	return &worktree.Manager{Run: runGit, Env: git.CLIEnv(os.Environ())}
}

func planPush(ctx context.Context, root string, a gitPushArgs) (pushPreview, error) {
	remote := a.Remote
	if remote == "" {
		remote = "origin"
	}
	out, err := runGit(ctx, root, git.CLIEnv(os.Environ()), []string{"symbolic-ref", "--quiet", "--short", "HEAD"})
	if err != nil {
		return pushPreview{}, errors.New("HEAD is not on a branch (or the workspace is not a git repository)")
	}
	branch := strings.TrimSpace(string(out))
	p, err := pushManager().PlanPush(ctx, root, worktree.Worktree{Branch: branch}, remote)
	if err != nil {
		return pushPreview{}, err
	}
	pv := pushPreview{PushPlan: p, PullRequest: a.PullRequest}
	if a.PullRequest {
		pv.GH = GHStatus(ctx, os.Getenv("PATH")).State
	}
	return pv, nil
}

// Action proposes the push; it always asks (push is an always-asking kind).
func (gitPush) Action(ctx context.Context, env backend.ToolEnv, raw json.RawMessage) (*backend.GatedAction, error) {
	a, err := decode[gitPushArgs](GitPush, gitPushSchema, raw)
	if err != nil || env.WorkspaceRoot == "" {
		return nil, nil
	}
	pv, err := planPush(ctx, env.WorkspaceRoot, a)
	if err != nil {
		return nil, nil
	}
	subject, _ := json.Marshal(map[string]any{"kind": string(backend.ActionPush), "remote": pv.Remote,
		"branch": pv.Branch, "from": pv.From, "to": pv.To, "pullRequest": pv.PullRequest})
	preview, _ := json.Marshal(pv)
	title := fmt.Sprintf("Push %d commit(s) of %s to %s", len(pv.Commits), pv.Branch, pv.Remote)
	if pv.PullRequest {
		title += " and open a pull request"
	}
	return &backend.GatedAction{Kind: backend.ActionPush, Risk: backend.RiskHigh, Title: title,
		Preview: []byte(newScrubber(env.WorkspaceRoot).text(string(preview))), Subject: subject}, nil
}

func (gitPush) Execute(ctx context.Context, env backend.ToolEnv, in backend.ToolInput) (backend.ToolResult, error) {
	a, err := decode[gitPushArgs](GitPush, gitPushSchema, in.Arguments)
	if err != nil {
		return failure(env, "%v", err), nil
	}
	if env.WorkspaceRoot == "" {
		return backend.ToolResult{}, fmt.Errorf("%s: %w", GitPush, errNoWorkspace)
	}
	pv, err := planPush(ctx, env.WorkspaceRoot, a)
	if err != nil {
		return failure(env, "%s: nothing was pushed: %v", GitPush, err), nil
	}
	if err := pushManager().Push(ctx, env.WorkspaceRoot, pv.PushPlan); err != nil {
		return failure(env, "%s: nothing was pushed: %v", GitPush, err), nil
	}
	out := fmt.Sprintf("%s: pushed %s to %s (%d commit(s), now at %s)", GitPush, pv.Branch, pv.Remote,
		len(pv.Commits), short(pv.To))
	if pv.PullRequest {
		url, err := OpenPullRequest(ctx, env.WorkspaceRoot, os.Getenv("PATH"), pv.Branch)
		if err != nil {
			return failure(env, "%s\nno pull request was opened: %v", out, err), nil
		}
		out += "\npull request: " + url
	}
	return success(env, out), nil
}

// GH is what AgentHub knows of the GitHub CLI.
type GH struct {
	State string `json:"state"` // missing | unauthenticated | ready
	bin   string
}

// GH states.
const (
	GHMissing         = "missing"
	GHUnauthenticated = "unauthenticated"
	GHReady           = "ready"
)

// GHStatus finds gh on path and asks it whether it is authenticated.
func GHStatus(ctx context.Context, path string) GH {
	bin, err := proc.Look("gh", path)
	if err != nil {
		return GH{State: GHMissing}
	}
	res, err := proc.Output(ctx, proc.Spec{Path: bin, Args: []string{"auth", "status"}, Env: os.Environ(),
		MaxOutput: 64 << 10})
	if err != nil || res.ExitCode != 0 {
		return GH{State: GHUnauthenticated, bin: bin}
	}
	return GH{State: GHReady, bin: bin}
}

// OpenPullRequest opens a pull request of branch with gh, from the
// repository at root, and returns what gh printed (its URL).
func OpenPullRequest(ctx context.Context, root, path, branch string) (string, error) {
	gh := GHStatus(ctx, path)
	if gh.State != GHReady {
		return "", fmt.Errorf("the GitHub CLI (gh) is %s", gh.State)
	}
	res, err := proc.Output(ctx, proc.Spec{Path: gh.bin, Dir: root, Env: os.Environ(), MaxOutput: 64 << 10,
		Args: []string{"pr", "create", "--fill", "--head", branch}})
	switch {
	case err != nil:
		return "", fmt.Errorf("run gh: %w", err)
	case res.ExitCode != 0:
		return "", fmt.Errorf("gh exited with status %d: %s", res.ExitCode, stderrLine(res.Stderr))
	}
	return strings.TrimSpace(string(res.Stdout)), nil
}
