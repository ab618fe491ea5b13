package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"agenthub/backend"
	"agenthub/workspace/git"
)

type gitStatusArgs struct{}

var gitStatusSchema = lazySchema[gitStatusArgs](nil)

const gitStatusDescription = `Show how the workspace differs from its git HEAD commit: one line per ` +
	`changed path as "<state>\t<path>", state being modified, added (staged, new), untracked or deleted. ` +
	`Ignored files are not listed. Takes no arguments.`

// gitStatus reports the work tree against HEAD. It only reads.
type gitStatus struct{}

func (gitStatus) Spec() backend.ToolSpec {
	return backend.ToolSpec{Name: GitStatus, Description: gitStatusDescription, Schema: gitStatusSchema.Raw()}
}

func (gitStatus) Action(context.Context, backend.ToolEnv, json.RawMessage) (*backend.GatedAction, error) {
	return nil, nil
}

func (gitStatus) Execute(_ context.Context, env backend.ToolEnv, in backend.ToolInput) (backend.ToolResult, error) {
	if _, err := decode[gitStatusArgs](GitStatus, gitStatusSchema, in.Arguments); err != nil {
		return failure(env, "%v", err), nil
	}
	if env.WorkspaceRoot == "" {
		return backend.ToolResult{}, fmt.Errorf("%s: %w", GitStatus, errNoWorkspace)
	}
	rep, err := git.Status(env.WorkspaceRoot)
	switch {
	case errors.Is(err, git.ErrNotRepository):
		return failure(env, "%s: the workspace is not a git repository (there is no .git at its root); "+
			"use list_dir to see its files", GitStatus), nil
	case err != nil:
		return failure(env, "%s: %v", GitStatus, err), nil
	}
	return success(env, renderStatus(rep)), nil
}

func renderStatus(rep git.Report) string {
	var b strings.Builder
	switch {
	case rep.Base == "" && rep.Branch != "":
		fmt.Fprintf(&b, "on branch %s, no commits yet", rep.Branch)
	case rep.Base == "":
		b.WriteString("no commits yet")
	case rep.Branch == "":
		fmt.Fprintf(&b, "HEAD detached at %s", short(rep.Base))
	default:
		fmt.Fprintf(&b, "on branch %s at %s", rep.Branch, short(rep.Base))
	}
	if len(rep.Files) == 0 && rep.Omitted == 0 {
		b.WriteString("; working tree clean\n")
		return b.String()
	}
	fmt.Fprintf(&b, "; %d changed paths\n", len(rep.Files)+rep.Omitted)
	for _, f := range rep.Files {
		var notes []string
		if f.Staged {
			notes = append(notes, "staged")
		}
		if f.ModeChanged {
			notes = append(notes, "mode changed")
		}
		fmt.Fprintf(&b, "%s\t%s", f.State, f.Path)
		if len(notes) > 0 {
			fmt.Fprintf(&b, "\t(%s)", strings.Join(notes, ", "))
		}
		b.WriteByte('\n')
	}
	if rep.Omitted > 0 {
		fmt.Fprintf(&b, "... and %d more (%s)\n", rep.Omitted, rep.OmittedReason)
	}
	return b.String()
}

func short(hash string) string { return hash[:min(len(hash), 12)] }
