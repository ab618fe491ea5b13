package tools

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"agenthub/backend"
	"agenthub/backend/agentpath"
	"agenthub/workspace"
)

// maxListEntries caps one listing; a bigger directory is cut and says so.
const maxListEntries = 1000

type listArgs struct {
	Path string `json:"path,omitempty" jsonschema:"workspace-relative directory; default \".\", the workspace root"`
}

var listSchema = lazySchema[listArgs](nil)

const listDescription = `List one directory of the workspace, sorted by name, one entry per line as ` +
	`"<kind>\t<name>\t<size in bytes>" where kind is dir, file, symlink or other. Not recursive. ` +
	`Paths are relative to the workspace root; "." is the root.`

// listDir lists one directory. Listing is a read: it needs no gate, but a
// secret directory (such as .ssh) is refused.
type listDir struct{}

func (listDir) Spec() backend.ToolSpec {
	return backend.ToolSpec{Name: ListDir, Description: listDescription, Schema: listSchema.Raw()}
}

func (listDir) Action(context.Context, backend.ToolEnv, json.RawMessage) (*backend.GatedAction, error) {
	return nil, nil
}

func (listDir) Execute(_ context.Context, env backend.ToolEnv, in backend.ToolInput) (backend.ToolResult, error) {
	a, err := decode[listArgs](ListDir, listSchema, in.Arguments)
	if err != nil {
		return failure(env, "%v", err), nil
	}
	if a.Path == "" {
		a.Path = "."
	}
	w, err := openWorkspace(env)
	if err != nil {
		return backend.ToolResult{}, fmt.Errorf("%s: %w", ListDir, err)
	}
	defer w.Close()
	w.MaxEntries = maxListEntries
	p, err := w.Resolve(a.Path)
	if err != nil {
		return failure(env, "%s: %s", ListDir, pathMessage(err)), nil
	}
	if ok, pat := agentpath.Secret(env.WorkspaceRoot, p); ok {
		return failure(env, "%s: refused: %s is a secret location (%s); agents never list secrets", ListDir, p, pat), nil
	}
	fi, err := w.Stat(p)
	if err != nil {
		return failure(env, "%s: %s", ListDir, pathMessage(err)), nil
	}
	if !fi.IsDir() {
		return failure(env, "%s: %s is a file, not a directory; use read_file", ListDir, p), nil
	}
	entries, truncated, err := w.ReadDir(p)
	if err != nil {
		return failure(env, "%s: %s", ListDir, pathMessage(err)), nil
	}
	return success(env, renderListing(p, entries, truncated)), nil
}

func renderListing(p string, entries []workspace.Entry, truncated bool) string {
	var b strings.Builder
	switch {
	case len(entries) == 0:
		return fmt.Sprintf("%s: empty directory\n", p)
	case truncated:
		fmt.Fprintf(&b, "%s: first %d entries (listing truncated; list subdirectories or use run_shell)\n", p, len(entries))
	default:
		fmt.Fprintf(&b, "%s: %d entries\n", p, len(entries))
	}
	for _, e := range entries {
		kind, size := "other", "-"
		switch {
		case e.Symlink:
			kind = "symlink"
		case e.Mode.IsDir():
			kind = "dir"
		case e.Mode.IsRegular():
			kind, size = "file", fmt.Sprint(e.Size)
		}
		fmt.Fprintf(&b, "%s\t%s\t%s\n", kind, e.Name, size)
	}
	return b.String()
}
