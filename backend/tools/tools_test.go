package tools

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestNewReturnsEveryToolUnderItsName(t *testing.T) {
	tools := New(Config{CheckpointDir: t.TempDir()})
	var names []string
	for name, tool := range tools {
		names = append(names, name)
		spec := tool.Spec()
		if spec.Name != name {
			t.Errorf("tool %q reports name %q", name, spec.Name)
		}
		if len(spec.Description) < 40 {
			t.Errorf("%s: description %q is too thin for a model", name, spec.Description)
		}
	}
	slices.Sort(names)
	want := []string{Delegate, DeleteFile, EditFile, FetchURL, GitCommit, GitDiff, GitPush, GitStatus, ListDir, PublishArtifact, ReadFile, RunShell, Screenshot, Search, WriteFile}
	if diff := cmp.Diff(want, names); diff != "" {
		t.Errorf("tools (-want +got):\n%s", diff)
	}
}

// schemaShape is the part of a generated schema the model relies on.
type schemaShape struct {
	Type                 string                     `json:"type"`
	Required             []string                   `json:"required"`
	Properties           map[string]json.RawMessage `json:"properties"`
	AdditionalProperties *bool                      `json:"additionalProperties"`
}

func TestSchemasComeFromTheArgumentTypes(t *testing.T) {
	tests := []struct {
		tool     string
		required []string
		props    []string
	}{
		{ListDir, nil, []string{"path"}},
		{ReadFile, []string{"path"}, []string{"end_line", "path", "start_line"}},
		{WriteFile, []string{"path", "content"}, []string{"content", "path"}},
		{EditFile, []string{"path", "old_string", "new_string"}, []string{"new_string", "old_string", "path"}},
		{DeleteFile, []string{"path"}, []string{"path"}},
		{RunShell, []string{"command"}, []string{"command", "network", "timeout_seconds"}},
		{GitStatus, nil, []string{}},
	}
	tools := New(Config{})
	for _, tc := range tests {
		t.Run(tc.tool, func(t *testing.T) {
			var s schemaShape
			mustJSON(t, tools[tc.tool].Spec().Schema, &s)
			if s.Type != "object" || s.AdditionalProperties == nil || *s.AdditionalProperties {
				t.Errorf("schema %s: want a closed object", tools[tc.tool].Spec().Schema)
			}
			if s.Properties == nil {
				t.Errorf("schema %s has no properties member", tools[tc.tool].Spec().Schema)
			}
			if diff := cmp.Diff(tc.required, s.Required); diff != "" {
				t.Errorf("required (-want +got):\n%s", diff)
			}
			var props []string
			for p := range s.Properties {
				props = append(props, p)
			}
			slices.Sort(props)
			if diff := cmp.Diff(tc.props, props, cmp.Comparer(func(a, b []string) bool { return slices.Equal(a, b) })); diff != "" {
				t.Errorf("properties (-want +got):\n%s", diff)
			}
		})
	}
	var shell struct {
		Properties struct {
			Timeout struct{ Minimum, Maximum float64 } `json:"timeout_seconds"`
		} `json:"properties"`
	}
	mustJSON(t, tools[RunShell].Spec().Schema, &shell)
	if shell.Properties.Timeout.Minimum != 1 || shell.Properties.Timeout.Maximum != 600 {
		t.Errorf("timeout_seconds bounds = %+v, want 1..600", shell.Properties.Timeout)
	}
}

// TestInvalidArgumentsAreToolErrors: a malformed call is never gated, never
// a Go error and never a panic; the model is told what is wrong.
func TestInvalidArgumentsAreToolErrors(t *testing.T) {
	tests := []struct {
		tool, args, want string
	}{
		{ReadFile, `{"path":`, "not valid JSON"},
		{ReadFile, `[]`, `want "object"`},
		{ReadFile, `{}`, `missing properties: ["path"]`},
		{ReadFile, `{"path":7}`, `path: type: 7 has type "integer", want "string"`},
		{ReadFile, `{"path":"a","mode":"x"}`, `additional properties ["mode"]`},
		{ReadFile, `{"path":"a","start_line":0}`, "start_line: minimum"},
		{ReadFile, `{"path":"a","start_line":1.5}`, `start_line: type`},
		{ReadFile, `{"path":""}`, "path: minLength"},
		{ListDir, `{"path":true}`, "path: type"},
		{ListDir, `{"recursive":true}`, `additional properties ["recursive"]`},
		{WriteFile, `{"path":"a.txt"}`, `missing properties: ["content"]`},
		{WriteFile, `{"path":"a.txt","content":1}`, "content: type"},
		{WriteFile, `not json`, "not valid JSON"},
		{EditFile, `{"path":"a.txt","old_string":"","new_string":"x"}`, "old_string: minLength"},
		{EditFile, `{"path":"a.txt","old_string":"a"}`, `missing properties: ["new_string"]`},
		{DeleteFile, `{"file":"a.txt"}`, `additional properties ["file"]`},
		{RunShell, `{}`, `missing properties: ["command"]`},
		{RunShell, `{"command":"ls","timeout_seconds":601}`, "timeout_seconds: maximum"},
		{RunShell, `{"command":"ls","timeout_seconds":"5"}`, "timeout_seconds: type"},
		{RunShell, `{"command":["ls"]}`, "command: type"},
		{GitStatus, `{"all":true}`, `additional properties ["all"]`},
	}
	f := newFixture(t)
	f.write(t, "a.txt", "a\n")
	for _, tc := range tests {
		t.Run(tc.tool+" "+tc.args, func(t *testing.T) {
			if a := f.action(t, tc.tool, tc.args); a != nil {
				t.Errorf("Action gated a malformed call: %+v", a)
			}
			res := f.execute(t, tc.tool, tc.args)
			if !res.IsError {
				t.Fatalf("Execute = %q, want a tool error", res.Content)
			}
			if !strings.Contains(res.Content, "invalid arguments for "+tc.tool) || !strings.Contains(res.Content, tc.want) {
				t.Errorf("message %q does not contain %q", res.Content, tc.want)
			}
			if !strings.Contains(res.Content, "the schema is {") && !strings.Contains(res.Content, "matching the schema {") {
				t.Errorf("message %q does not show the schema", res.Content)
			}
		})
	}
	if got := f.read(t, "a.txt"); got != "a\n" {
		t.Errorf("a.txt = %q after malformed calls", got)
	}
}

func TestEmptyArgumentsMeanNone(t *testing.T) {
	f := newFixture(t)
	f.write(t, "x.txt", "x")
	for _, args := range []string{``, `null`, ` {} `} {
		res := f.execute(t, ListDir, args)
		if res.IsError || !strings.Contains(res.Content, "x.txt") {
			t.Errorf("list_dir(%q) = %+v", args, res)
		}
	}
}

func TestValidationMessage(t *testing.T) {
	tests := map[string]string{
		"validating root: required: missing properties: [\"path\"]":                     `required: missing properties: ["path"]`,
		"validating root: validating /properties/path: type: 1 has type \"integer\"":    `path: type: 1 has type "integer"`,
		"validating root: unexpected additional properties [\"x\"]":                     `unexpected additional properties ["x"]`,
		"validating root: validating /properties/a: validating /properties/b: type: no": "a: b: type: no",
	}
	for in, want := range tests {
		if got := validation(stringError(in)); got != want {
			t.Errorf("validation(%q) = %q, want %q", in, got, want)
		}
	}
}

type stringError string

func (e stringError) Error() string { return string(e) }
