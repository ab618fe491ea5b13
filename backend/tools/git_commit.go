package tools

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"agenthub/backend"
	"agenthub/backend/agentpath"
	"agenthub/workspace/git"
)

type gitCommitArgs struct {
	Message string   `json:"message" jsonschema:"the commit message"`
	Paths   []string `json:"paths,omitempty" jsonschema:"workspace-relative paths to commit; default: every changed path"`
}

var gitCommitSchema = lazySchema[gitCommitArgs](func(s *jsonschema.Schema) {
	prop(s, "message").MinLength = jsonschema.Ptr(1)
})

const gitCommitDescription = `Commit changes of the workspace to its git repository on the current branch. ` +
	`Always asks the user first. Commits exactly the named paths (default: every changed path); ` +
	`it refuses when other changes are already staged. Secret files (.env, keys, credentials), ` +
	`hard-linked files, symlinks leading outside the workspace and special files are never committed: ` +
	`with default paths they are left out (the result names them), named they are refused. Never pushes.`

// gitCommit records changes as a commit. Its subject binds the message, the
// exact paths and the HEAD the reviewer saw, so a moved HEAD or a different
// file list is drift.
type gitCommit struct{}

// commitPlan is what the reviewer approves.
type commitPlan struct {
	Message string       `json:"message"`
	Base    string       `json:"base"`
	Branch  string       `json:"branch"`
	Files   []commitFile `json:"files"`
	// Excluded are changed files left out of a default-paths commit, and why.
	Excluded []excludedFile `json:"excluded,omitempty"`
}

// commitFile is one file of the commit with the blob the commit records
// ("" for a deletion).
type commitFile struct {
	git.File
	Blob string `json:"blob,omitempty"`
}

// excludedFile is a changed file AgentHub does not commit.
type excludedFile struct {
	Path   string `json:"path"`
	Reason string `json:"reason"`
}

func (p commitPlan) paths() []string {
	out := make([]string, len(p.Files))
	for i, f := range p.Files {
		out[i] = f.Path
	}
	return out
}

// blobs are the approved contents by path, for git.CommitRequest.Blobs.
func (p commitPlan) blobs() map[string]string {
	out := map[string]string{}
	for _, f := range p.Files {
		if f.Blob != "" {
			out[f.Path] = f.Blob
		}
	}
	return out
}

func (gitCommit) Spec() backend.ToolSpec {
	return backend.ToolSpec{Name: GitCommit, Description: gitCommitDescription, Schema: gitCommitSchema.Raw()}
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
	// The subject binds the content of every file, not only its path: a
	// file edited after the approval is drift.
	files := make([]map[string]string, len(p.Files))
	for i, f := range p.Files {
		files[i] = map[string]string{"path": f.Path, "state": string(f.State), "blob": f.Blob}
	}
	subject, _ := json.Marshal(map[string]any{"kind": string(backend.ActionCommit), "message": p.Message,
		"base": p.Base, "branch": p.Branch, "paths": p.paths(), "files": files})
	preview, _ := json.Marshal(p)
	return &backend.GatedAction{Kind: backend.ActionCommit, Risk: backend.RiskMedium,
		Title:   fmt.Sprintf("Commit %d file(s) to %s", len(p.Files), orDetached(p.Branch)),
		Preview: []byte(newScrubber(env.WorkspaceRoot).text(string(preview))), Subject: subject,
		TitleMessage: backend.Msg("title_commit", "count", strconv.Itoa(len(p.Files)), "branch", orDetached(p.Branch))}, nil
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
	paths := p.paths()
	intent, err := p.intend(env)
	if err != nil {
		return failure(env, "%s: nothing was committed: %v", GitCommit, err), nil
	}
	hash, err := r.Commit(git.CommitRequest{Message: p.Message, Paths: paths, Base: p.Base, Blobs: p.blobs(),
		When: time.Now()})
	if err != nil {
		if intent != "" {
			verdict := git.LandedOther
			if l, lerr := r.Landed(p.Base, p.intentBlobs()); lerr == nil {
				verdict = l.State
			}
			env.Intents.Abandon(intent, verdict, err)
		}
		return failure(env, "%s: nothing was committed: %v", GitCommit, err), nil
	}
	if closer, ok := env.Intents.(backend.IntentCloser); ok && intent != "" {
		if err := closer.Applied(intent, "committed "+hash); err != nil {
			// The commit is made; recovery closes the intent from the repository.
			slog.Warn("git_commit: close the intent", "intent_id", intent, "err", err)
		}
	}
	out := fmt.Sprintf("%s: committed %s on %s: %s", GitCommit, short(hash), orDetached(p.Branch),
		strings.Join(paths, ", "))
	for _, x := range p.Excluded {
		out += fmt.Sprintf("\nleft out %s: %s", x.Path, x.Reason)
	}
	return success(env, out), nil
}

// intend records the commit as an intent of the call before it is made
// (intent before effect, docs/RELIABILITY.md): the base HEAD and the blob
// of every path, so that recovery can tell from the repository whether a
// commit a crash cut was made. It returns the intent's id ("" without a
// journal); an intent that cannot be recorded stops the commit.
func (p commitPlan) intend(env backend.ToolEnv) (string, error) {
	if env.Intents == nil {
		return "", nil
	}
	var b [8]byte
	if _, err := rand.Read(b[:]); err != nil {
		return "", fmt.Errorf("intent id: %w", err)
	}
	in := backend.Intent{ID: "commit_" + hex.EncodeToString(b[:]), Op: backend.IntentCommit,
		Files: []backend.IntentFile{{Path: "HEAD", Before: p.Base}}}
	for _, f := range p.Files {
		in.Files = append(in.Files, backend.IntentFile{Path: f.Path, After: f.Blob})
	}
	if err := env.Intents.Intend(in); err != nil {
		return "", fmt.Errorf("record the intent: %w", err)
	}
	return in.ID, nil
}

// intentBlobs are the blobs a landed commit holds, by path ("" deleted).
func (p commitPlan) intentBlobs() map[string]string {
	out := map[string]string{}
	for _, f := range p.Files {
		out[f.Path] = f.Blob
	}
	return out
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
	r, err := git.Open(root)
	if err != nil {
		return commitPlan{}, err
	}
	p := commitPlan{Message: strings.TrimSpace(a.Message), Base: rep.Base, Branch: rep.Branch}
	var changed []string
	for _, f := range rep.Files {
		if len(a.Paths) > 0 && !slices.Contains(a.Paths, f.Path) {
			continue
		}
		changed = append(changed, f.Path)
		cf, reason, err := vetCommitFile(root, r, f)
		switch {
		case err != nil:
			return commitPlan{}, err
		case reason != "" && len(a.Paths) > 0:
			return commitPlan{}, fmt.Errorf("refused: %s is %s; agents never commit such files", f.Path, reason)
		case reason != "":
			p.Excluded = append(p.Excluded, excludedFile{Path: f.Path, Reason: reason})
		default:
			p.Files = append(p.Files, cf)
		}
	}
	for _, want := range a.Paths {
		if !slices.Contains(changed, want) {
			return commitPlan{}, fmt.Errorf("%s has no changes to commit (see git_status)", want)
		}
	}
	if len(p.Files) == 0 && len(p.Excluded) > 0 {
		return commitPlan{}, fmt.Errorf("nothing to commit: every changed file is left out (%s)", describeExcluded(p.Excluded))
	}
	if len(p.Files) == 0 {
		return commitPlan{}, errors.New("nothing to commit: the working tree matches HEAD")
	}
	return p, nil
}

// vetCommitFile checks one changed file as the file tools would: a secret
// path (or a symlink to one), a hard link, a symlink leading out or a
// special file is refused with its reason. A deletion records no content
// and is always allowed.
func vetCommitFile(root string, r *git.Repo, f git.File) (commitFile, string, error) {
	if f.State == git.Deleted {
		return commitFile{File: f}, "", nil
	}
	if ok, pat := agentpath.Secret(root, f.Path); ok {
		return commitFile{}, fmt.Sprintf("a secret file (%s)", pat), nil
	}
	blob, reason, err := r.Inspect(f.Path)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		return commitFile{}, "", fmt.Errorf("%s changed while the commit was prepared; call git_commit again", f.Path)
	case err != nil:
		return commitFile{}, "", err
	}
	return commitFile{File: f, Blob: blob}, reason, nil
}

func describeExcluded(xs []excludedFile) string {
	parts := make([]string, len(xs))
	for i, x := range xs {
		parts[i] = x.Path + ": " + x.Reason
	}
	return strings.Join(parts, "; ")
}

func orDetached(branch string) string {
	if branch == "" {
		return "a detached HEAD"
	}
	return branch
}
