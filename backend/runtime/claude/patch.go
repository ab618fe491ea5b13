package claude

import (
	"errors"
	"fmt"
	"strings"

	"agenthub/backend"
	"agenthub/backend/patch"
	"agenthub/backend/scrub"
	"agenthub/workspace"
)

// This file turns Claude Code's Write, Edit and MultiEdit into the same
// staged patch (backend/patch) the built-in write_file and edit_file show,
// so the UI, the policy and grants treat both alike.

// fileInput is the input of Write, Edit and MultiEdit, paths
// workspace-relative.
type fileInput struct {
	FilePath   string  `json:"file_path"`
	Content    *string `json:"content,omitempty"`
	OldString  *string `json:"old_string,omitempty"`
	NewString  *string `json:"new_string,omitempty"`
	ReplaceAll bool    `json:"replace_all,omitempty"`
	Edits      []edit  `json:"edits,omitempty"`
}

type edit struct {
	OldString  string `json:"old_string"`
	NewString  string `json:"new_string"`
	ReplaceAll bool   `json:"replace_all,omitempty"`
}

// propose computes the change a file tool asks for. Its error is written
// for the agent.
func propose(w *workspace.FS, tool string, in fileInput) (patch.Proposal, error) {
	p, err := w.Resolve(in.FilePath)
	if err != nil {
		return patch.Proposal{}, err
	}
	return patch.Prepare(w, p, func(cur []byte, exists bool) ([]byte, bool, error) {
		next, err := nextContent(tool, in, string(cur), exists, p)
		return []byte(next), false, err
	})
}

// nextContent applies the tool's input to the current content, with Claude
// Code's semantics: Write replaces, Edit replaces one occurrence (or all
// with replace_all; an empty old_string creates the file), MultiEdit applies
// its edits in order.
func nextContent(tool string, in fileInput, cur string, exists bool, p string) (string, error) {
	switch tool {
	case "Write":
		if in.Content == nil {
			return "", errors.New("Write without content")
		}
		return *in.Content, nil
	case "Edit":
		if in.OldString == nil || in.NewString == nil {
			return "", errors.New("Edit without old_string or new_string")
		}
		return applyEdit(cur, exists, edit{OldString: *in.OldString, NewString: *in.NewString, ReplaceAll: in.ReplaceAll}, p)
	case "MultiEdit":
		if len(in.Edits) == 0 {
			return "", errors.New("MultiEdit without edits")
		}
		for i, e := range in.Edits {
			next, err := applyEdit(cur, exists, e, p)
			if err != nil {
				return "", fmt.Errorf("edit %d: %w", i+1, err)
			}
			cur, exists = next, true
		}
		return cur, nil
	}
	return "", fmt.Errorf("%s is not a file tool", tool)
}

func applyEdit(cur string, exists bool, e edit, p string) (string, error) {
	switch {
	case e.OldString == "" && (!exists || cur == ""):
		return e.NewString, nil
	case e.OldString == "":
		return "", fmt.Errorf("old_string is empty, but %s is not", p)
	case !exists:
		return "", fmt.Errorf("%s does not exist", p)
	case e.OldString == e.NewString:
		return "", errors.New("old_string and new_string are identical")
	}
	switch n := strings.Count(cur, e.OldString); {
	case n == 0:
		return "", fmt.Errorf("old_string was not found in %s", p)
	case n > 1 && !e.ReplaceAll:
		return "", fmt.Errorf("old_string matches %d times in %s; it must match once, or set replace_all", n, p)
	}
	if e.ReplaceAll {
		return strings.ReplaceAll(cur, e.OldString, e.NewString), nil
	}
	return strings.Replace(cur, e.OldString, e.NewString, 1), nil
}

// gated describes a change for the gate, marked as Claude Code's.
func gated(env backend.ToolEnv, tool string, c patch.Proposal) (*backend.GatedAction, error) {
	return patch.Gated(env, patch.Request{Tool: tool, Runtime: "claude",
		Scrub: func(s string) string { return scrub.Paths(env.WorkspaceRoot, s) }}, c)
}
