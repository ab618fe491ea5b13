package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"agenthub/backend"
	"agenthub/backend/agentpath"
	"agenthub/diffview"
	"agenthub/workspace/git"
)

type gitDiffArgs struct {
	Path string `json:"path,omitempty" jsonschema:"a workspace-relative path; default: every changed path"`
}

var gitDiffSchema = lazySchema[gitDiffArgs](nil)

const gitDiffDescription = `Show the unified diff of the workspace against its git HEAD commit, for every ` +
	`changed path or one path. Untracked files are shown as added. Read-only.`

// maxDiffOutput caps what git_diff returns to the model.
const maxDiffOutput = 256 << 10

// gitDiff renders the work tree against HEAD with diffview. It only reads.
type gitDiff struct{}

func (gitDiff) Spec() backend.ToolSpec {
	return backend.ToolSpec{Name: GitDiff, Description: gitDiffDescription, Schema: gitDiffSchema.Raw()}
}

func (gitDiff) Action(context.Context, backend.ToolEnv, json.RawMessage) (*backend.GatedAction, error) {
	return nil, nil
}

func (gitDiff) Execute(_ context.Context, env backend.ToolEnv, in backend.ToolInput) (backend.ToolResult, error) {
	a, err := decode[gitDiffArgs](GitDiff, gitDiffSchema, in.Arguments)
	if err != nil {
		return failure(env, "%v", err), nil
	}
	w, err := openWorkspace(env)
	if err != nil {
		return backend.ToolResult{}, fmt.Errorf("%s: %w", GitDiff, err)
	}
	defer w.Close()
	rep, err := git.Status(env.WorkspaceRoot)
	switch {
	case errors.Is(err, git.ErrNotRepository):
		return failure(env, "%s: the workspace is not a git repository", GitDiff), nil
	case err != nil:
		return failure(env, "%s: %v", GitDiff, err), nil
	}
	var out strings.Builder
	for _, f := range rep.Files {
		if a.Path != "" && f.Path != a.Path {
			continue
		}
		if ok, _ := agentpath.Secret(env.WorkspaceRoot, f.Path); ok {
			fmt.Fprintf(&out, "diff of %s withheld: it is a secret file\n", f.Path)
			continue
		}
		fd, err := diffOf(env.WorkspaceRoot, w.ReadFile, f)
		if err != nil {
			return failure(env, "%s: %s: %v", GitDiff, f.Path, err), nil
		}
		out.Write(diffview.Unified(fd))
		if out.Len() > maxDiffOutput {
			return success(env, out.String()[:maxDiffOutput]+"\n[diff truncated at 256 KiB]\n"), nil
		}
	}
	if out.Len() == 0 {
		return success(env, "no differences from HEAD"), nil
	}
	return success(env, out.String()), nil
}

// diffOf diffs one changed file: HEAD's blob against the disk.
func diffOf(root string, read func(string) ([]byte, error), f git.File) (diffview.FileDiff, error) {
	var oldSide, newSide diffview.Side
	if old, ok, err := git.HeadBlob(root, f.Path); err != nil {
		return diffview.FileDiff{}, err
	} else if ok {
		oldSide = diffview.Side{Path: f.Path, Content: old}
	}
	if f.State != git.Deleted {
		data, err := read(f.Path)
		if err != nil {
			return diffview.FileDiff{}, err
		}
		newSide = diffview.Side{Path: f.Path, Content: data}
	}
	return diffview.Diff(oldSide, newSide, diffview.Options{})
}
