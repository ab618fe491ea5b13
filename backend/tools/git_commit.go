package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"agenthub/backend"
	"agenthub/workspace/git"
)

type gitCommitArgs struct {
	Message string   `json:"message" jsonschema:"the commit message"`
	Paths   []string `json:"paths,omitempty" jsonschema:"workspace-relative paths to commit; default: every changed path"`
}

var gitCommitSchema = mustSchema[gitCommitArgs](func(s *jsonschema.Schema) {
	prop(s, "message").MinLength = jsonschema.Ptr(1)
})

const gitCommitDescription = `Commit changes of the workspace to its git repository on the current branch. ` +
	`Always asks the user first. Commits exactly the named paths (default: every changed path); ` +
	`it refuses when other changes are already staged. Never pushes.`

// gitCommit records changes as a commit. Its subject binds the message, the
// exact paths and the HEAD the reviewer saw, so a moved HEAD or a different
// file list is drift.
type gitCommit struct{}

// commitPlan is what the reviewer approves.
type commitPlan struct {
	Message string     `json:"message"`
	Base    string     `json:"base"`
	Branch  string     `json:"branch"`
	Files   []git.File `json:"files"`
}

func (gitCommit) Spec() backend.ToolSpec {
	return backend.ToolSpec{Name: GitCommit, Description: gitCommitDescription, Schema: gitCommitSchema.raw}
}

// Action proposes the commit; a call the model got wrong needs no gate and
// Execute reports the mistake.
func (gitCommit) Action(_ context.Context, env backend.ToolEnv, raw json.RawMessage) (*backend.GatedAction, error) {
	a, err := decode[gitCommitArgs](GitCommit, gitCommitSchema, raw)
	if err != nil || env.WorkspaceRoot == "" {
		return nil, nil
	}
	p, err := planCommit(env.WorkspaceRoot, a)
	if err != nil {
		return nil, nil
	}
	paths := make([]string, len(p.Files))
	for i, f := range p.Files {
		paths[i] = f.Path
	}
	subject, _ := json.Marshal(map[string]any{"kind": string(backend.ActionCommit), "message": p.Message,
		"base": p.Base, "branch": p.Branch, "paths": paths})
	preview, _ := json.Marshal(p)
	return &backend.GatedAction{Kind: backend.ActionCommit, Risk: backend.RiskMedium,
		Title:   fmt.Sprintf("Commit %d file(s) to %s", len(p.Files), orDetached(p.Branch)),
		Preview: []byte(newScrubber(env.WorkspaceRoot).text(string(preview))), Subject: subject}, nil
}

func (gitCommit) Execute(_ context.Context, env backend.ToolEnv, in backend.ToolInput) (backend.ToolResult, error) {
	a, err := decode[gitCommitArgs](GitCommit, gitCommitSchema, in.Arguments)
	if err != nil {
		return failure(env, "%v", err), nil
	}
	if env.WorkspaceRoot == "" {
		return backend.ToolResult{}, fmt.Errorf("%s: %w", GitCommit, errNoWorkspace)
	}
	p, err := planCommit(env.WorkspaceRoot, a)
	if err != nil {
		return failure(env, "%s: %v", GitCommit, err), nil
	}
	r, err := git.Open(env.WorkspaceRoot)
	if err != nil {
		return failure(env, "%s: %v", GitCommit, err), nil
	}
	paths := make([]string, len(p.Files))
	for i, f := range p.Files {
		paths[i] = f.Path
	}
	hash, err := r.Commit(git.CommitRequest{Message: p.Message, Paths: paths, Base: p.Base, When: time.Now()})
	if err != nil {
		return failure(env, "%s: nothing was committed: %v", GitCommit, err), nil
	}
	return success(env, fmt.Sprintf("%s: committed %s on %s: %s", GitCommit, short(hash), orDetached(p.Branch),
		strings.Join(paths, ", "))), nil
}

// planCommit resolves the paths against the status now; its error is
// written for the model.
func planCommit(root string, a gitCommitArgs) (commitPlan, error) {
	rep, err := git.Status(root)
	if errors.Is(err, git.ErrNotRepository) {
		return commitPlan{}, errors.New("the workspace is not a git repository")
	}
	if err != nil {
		return commitPlan{}, err
	}
	p := commitPlan{Message: strings.TrimSpace(a.Message), Base: rep.Base, Branch: rep.Branch}
	for _, f := range rep.Files {
		if len(a.Paths) == 0 || slices.Contains(a.Paths, f.Path) {
			p.Files = append(p.Files, f)
		}
	}
	for _, want := range a.Paths {
		if !slices.ContainsFunc(p.Files, func(f git.File) bool { return f.Path == want }) {
			return commitPlan{}, fmt.Errorf("%s has no changes to commit (see git_status)", want)
		}
	}
	if len(p.Files) == 0 {
		return commitPlan{}, errors.New("nothing to commit: the working tree matches HEAD")
	}
	return p, nil
}

func orDetached(branch string) string {
	if branch == "" {
		return "a detached HEAD"
	}
	return branch
}
