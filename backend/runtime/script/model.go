package script

import (
	"context"
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"time"

	"agenthub/backend"
)

// Model plays a playbook as a backend.Model. It keeps no state of its own:
// the step comes from the request, and variables from the transcript, so one
// Model serves any number of runs and survives a restart.
type Model struct {
	pb *Playbook
	// Pace is the delay between streamed words, so a watcher sees text
	// arrive as it would from a model; zero streams at once.
	Pace time.Duration
}

// NewModel returns a model that plays pb.
func NewModel(pb *Playbook) *Model { return &Model{pb: pb} }

// Playbook returns the playbook played.
func (m *Model) Playbook() *Playbook { return m.pb }

// Stream implements backend.Model.
func (m *Model) Stream(ctx context.Context, req backend.ModelRequest, delta func(string)) (backend.ModelResponse, error) {
	if req.Step < 1 || req.Step > len(m.pb.Steps) {
		return backend.ModelResponse{}, fail(req.Step, "the playbook has only %d steps", len(m.pb.Steps))
	}
	step := m.pb.Steps[req.Step-1]
	results := lastResults(req.Messages)
	for _, want := range step.Expect {
		if !strings.Contains(results, want) {
			return backend.ModelResponse{}, fail(req.Step, "expected the previous tool results to contain %q", want)
		}
	}
	vars := bind(step.Bind, runResults(req.Messages))
	text := expand(step.Say, vars)
	if err := m.stream(ctx, text, delta); err != nil {
		return backend.ModelResponse{}, err
	}
	resp := backend.ModelResponse{Text: text}
	for i, c := range step.Calls {
		args, err := json.Marshal(expandAny(c.Args, vars))
		if err != nil {
			return backend.ModelResponse{}, fail(req.Step, "call %d arguments: %v", i+1, err)
		}
		if c.Args == nil {
			args = []byte("{}")
		}
		resp.Calls = append(resp.Calls, backend.ToolCallRequest{
			ID: fmt.Sprintf("call_s%d_%d", req.Step, i+1), Name: c.Tool, Arguments: args})
	}
	return resp, nil
}

// stream emits text word by word, honouring cancellation between words.
func (m *Model) stream(ctx context.Context, text string, delta func(string)) error {
	for _, w := range splitKeep(text) {
		if err := ctx.Err(); err != nil {
			return err
		}
		delta(w)
		if m.Pace > 0 {
			select {
			case <-ctx.Done():
				return ctx.Err()
			case <-time.After(m.Pace):
			}
		}
	}
	return nil
}

// splitKeep splits after each space, so the pieces concatenate to text.
func splitKeep(text string) []string {
	var out []string
	for text != "" {
		i := strings.IndexByte(text, ' ')
		if i < 0 {
			return append(out, text)
		}
		out = append(out, text[:i+1])
		text = text[i+1:]
	}
	return out
}

func fail(step int, format string, args ...any) error {
	return &backend.Error{Code: backend.FailPlaybookExpectation,
		Message: fmt.Sprintf("playbook step %d: %s", step, fmt.Sprintf(format, args...)),
		Next:    "Fix the playbook, or check that the workspace holds what it expects."}
}

// lastResults joins the tool results that follow the last assistant message.
func lastResults(msgs []backend.Message) string {
	var parts []string
	for i := len(msgs) - 1; i >= 0 && msgs[i].Role != backend.RoleAssistant; i-- {
		if msgs[i].Role == backend.RoleTool {
			parts = append([]string{msgs[i].Text}, parts...)
		}
	}
	return strings.Join(parts, "\n")
}

// runResults joins every tool result of this run: those after the last
// user message that is not a steer.
func runResults(msgs []backend.Message) string {
	start := 0
	for i := len(msgs) - 1; i >= 0; i-- {
		if msgs[i].Role == backend.RoleUser && !msgs[i].Steer {
			start = i + 1
			break
		}
	}
	var parts []string
	for _, m := range msgs[start:] {
		if m.Role == backend.RoleTool {
			parts = append(parts, m.Text)
		}
	}
	return strings.Join(parts, "\n")
}

func bind(bs map[string]Binding, text string) map[string]string {
	vars := map[string]string{}
	for name, b := range bs {
		vars[name] = capture(b, text)
	}
	return vars
}

func capture(b Binding, text string) string {
	re := b.re
	if re == nil {
		re = regexp.MustCompile(b.Pattern) // validated by Parse
	}
	var found []string
	for _, m := range re.FindAllStringSubmatch(text, -1) {
		v := m[0]
		if len(m) > 1 {
			v = m[1]
		}
		found = append(found, v)
		if !b.All {
			break
		}
	}
	if len(found) == 0 {
		return b.Default
	}
	return strings.Join(found, "\n")
}

var placeholder = regexp.MustCompile(`\{\{([a-z][a-z0-9_]*)\}\}`)

func expand(s string, vars map[string]string) string {
	return placeholder.ReplaceAllStringFunc(s, func(m string) string {
		if v, ok := vars[m[2:len(m)-2]]; ok {
			return v
		}
		return m
	})
}

func expandAny(v any, vars map[string]string) any {
	switch t := v.(type) {
	case string:
		return expand(t, vars)
	case map[string]any:
		out := make(map[string]any, len(t))
		for k, x := range t {
			out[k] = expandAny(x, vars)
		}
		return out
	case []any:
		out := make([]any, len(t))
		for i, x := range t {
			out[i] = expandAny(x, vars)
		}
		return out
	}
	return v
}
