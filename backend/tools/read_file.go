package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"agenthub/backend"
	"agenthub/backend/agentpath"
)

// maxReadOutput caps what one read_file returns to the model.
const maxReadOutput = 256 << 10

// binarySniff is how much of a file is searched for a NUL byte, as git does.
const binarySniff = 8 << 10

type readArgs struct {
	Path      string `json:"path" jsonschema:"workspace-relative path of the file, e.g. src/main.go"`
	StartLine int    `json:"start_line,omitempty" jsonschema:"first line to return, 1-based; default 1"`
	EndLine   int    `json:"end_line,omitempty" jsonschema:"last line to return, inclusive; default the last line"`
}

var readSchema = lazySchema[readArgs](func(s *jsonschema.Schema) {
	prop(s, "path").MinLength = jsonschema.Ptr(1)
	prop(s, "start_line").Minimum = jsonschema.Ptr(1.0)
	prop(s, "end_line").Minimum = jsonschema.Ptr(1.0)
})

const readDescription = `Read a text file of the workspace. The first line of the result is a header ` +
	`naming the file and the lines shown; the file's content follows exactly. Use start_line and ` +
	`end_line (1-based, inclusive) for part of a large file. At most 256 KiB are returned; the header ` +
	`says when the output was cut and where to continue. Binary files are reported, not shown. Secret ` +
	`files (.env, private keys, credentials) cannot be read.`

// readFile reads (part of) one file. Reads need no approval; reads of secret
// paths are turned into a secret action the gate denies.
type readFile struct{}

func (readFile) Spec() backend.ToolSpec {
	return backend.ToolSpec{Name: ReadFile, Description: readDescription, Schema: readSchema.Raw()}
}

// Action gates only secret paths. Invalid arguments need no gate: Execute
// reports them.
func (readFile) Action(_ context.Context, env backend.ToolEnv, raw json.RawMessage) (*backend.GatedAction, error) {
	a, err := decode[readArgs](ReadFile, readSchema, raw)
	if err != nil {
		return nil, nil
	}
	w, err := openWorkspace(env)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", ReadFile, err)
	}
	defer w.Close()
	p, err := w.Resolve(a.Path)
	if err != nil {
		return nil, nil
	}
	if ok, pat := agentpath.Secret(env.WorkspaceRoot, p); ok {
		return secretAction(ReadFile, "read", p, pat), nil
	}
	return nil, nil
}

func (readFile) Execute(_ context.Context, env backend.ToolEnv, in backend.ToolInput) (backend.ToolResult, error) {
	a, err := decode[readArgs](ReadFile, readSchema, in.Arguments)
	if err != nil {
		return failure(env, "%v", err), nil
	}
	if a.EndLine > 0 && a.StartLine > a.EndLine {
		return failure(env, "%s: start_line %d is after end_line %d", ReadFile, a.StartLine, a.EndLine), nil
	}
	w, err := openWorkspace(env)
	if err != nil {
		return backend.ToolResult{}, fmt.Errorf("%s: %w", ReadFile, err)
	}
	defer w.Close()
	p, err := w.Resolve(a.Path)
	if err != nil {
		return failure(env, "%s: %s", ReadFile, pathMessage(err)), nil
	}
	// Checked again here: the gate saw the path before a symlink could be
	// swapped in, and a secret must never be read whatever the policy says.
	if ok, pat := agentpath.Secret(env.WorkspaceRoot, p); ok {
		return failure(env, "%s: refused: %s is a secret file (%s); agents never read secrets", ReadFile, p, pat), nil
	}
	if fi, err := w.Stat(p); err == nil && fi.IsDir() {
		return failure(env, "%s: %s is a directory; use list_dir", ReadFile, p), nil
	}
	data, err := w.ReadFile(p)
	if err != nil {
		return failure(env, "%s: %s", ReadFile, pathMessage(err)), nil
	}
	out, ev, err := renderLines(p, data, a.StartLine, a.EndLine)
	if err != nil {
		return failure(env, "%s: %v", ReadFile, err), nil
	}
	if env.Emit != nil {
		env.Emit(backend.EvFileRead, ev)
	}
	return success(env, out), nil
}

// fileRead is the payload of run.file.read.
type fileRead struct {
	Tool      string `json:"tool"`
	Path      string `json:"path"`
	Bytes     int    `json:"bytes"`
	StartLine int    `json:"startLine,omitempty"`
	EndLine   int    `json:"endLine,omitempty"`
	Truncated bool   `json:"truncated,omitempty"`
	Binary    bool   `json:"binary,omitempty"`
}

// renderLines returns the header line and lines start..end of data, cut at
// maxReadOutput on a line boundary.
func renderLines(p string, data []byte, start, end int) (string, fileRead, error) {
	ev := fileRead{Tool: ReadFile, Path: p, Bytes: len(data)}
	if bytes.IndexByte(data[:min(len(data), binarySniff)], 0) >= 0 {
		ev.Binary = true
		return fmt.Sprintf("%s: binary file (%d bytes), not shown\n", p, len(data)), ev, nil
	}
	lines := splitLines(data)
	total := len(lines)
	if total == 0 {
		return fmt.Sprintf("%s: empty file (0 bytes)\n", p), ev, nil
	}
	if start == 0 {
		start = 1
	}
	if start > total {
		return "", ev, fmt.Errorf("start_line %d is past the end of %s, which has %d lines", start, p, total)
	}
	if end == 0 || end > total {
		end = total
	}
	var body strings.Builder
	last := start - 1
	for _, l := range lines[start-1 : end] {
		if body.Len()+len(l) > maxReadOutput {
			break
		}
		body.WriteString(l)
		last++
	}
	if last < start && body.Len() == 0 {
		// One line longer than the cap: show its beginning.
		body.WriteString(lines[start-1][:maxReadOutput])
		last = start
		ev.Truncated = true
	}
	ev.StartLine, ev.EndLine = start, last
	header := fmt.Sprintf("%s: lines %d-%d of %d (%d bytes)", p, start, last, total, len(data))
	switch {
	case ev.Truncated:
		header += fmt.Sprintf("; line %d is longer than %d bytes and was cut", last, maxReadOutput)
	case last < end:
		ev.Truncated = true
		header += fmt.Sprintf("; output truncated at %d KiB, continue with start_line=%d", maxReadOutput>>10, last+1)
	}
	out := header + "\n" + body.String()
	switch {
	case strings.HasSuffix(out, "\n"):
	case last == total && !ev.Truncated:
		out += "\n\\ No newline at end of file\n"
	default:
		out += "\n"
	}
	return out, ev, nil
}

// splitLines splits after each '\n', keeping terminators; a last line
// without one counts.
func splitLines(data []byte) []string {
	s := string(data)
	var out []string
	for s != "" {
		i := strings.IndexByte(s, '\n')
		if i < 0 {
			out = append(out, s)
			break
		}
		out = append(out, s[:i+1])
		s = s[i+1:]
	}
	return out
}
