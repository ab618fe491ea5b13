package tools

import (
	"github.com/google/jsonschema-go/jsonschema"

	"agenthub/backend"
)

type writeArgs struct {
	Path    string `json:"path" jsonschema:"workspace-relative path of the file to create or overwrite, e.g. src/main.go"`
	Content string `json:"content" jsonschema:"the complete new content of the file"`
}

var writeSchema = lazySchema[writeArgs](func(s *jsonschema.Schema) {
	prop(s, "path").MinLength = jsonschema.Ptr(1)
})

const writeDescription = `Create a file or replace its whole content. The change is shown to the user ` +
	`as a diff and applied only after approval; the previous content is checkpointed. Missing parent ` +
	`directories are created. Prefer edit_file for changing part of an existing file. Paths are relative ` +
	`to the workspace root; secret files (.env, keys, credentials), .git/ and .agenthub/ cannot be written.`

// writeOp replaces a file's whole content.
type writeOp struct{}

func (writeOp) spec() backend.ToolSpec {
	return backend.ToolSpec{Name: WriteFile, Description: writeDescription, Schema: writeSchema.Raw()}
}

func (writeOp) schema() *argSchema { return writeSchema }

func (writeOp) path(a writeArgs) string { return a.Path }

func (writeOp) propose(a writeArgs, _ string, _ []byte, _ bool) ([]byte, bool, error) {
	return []byte(a.Content), false, nil
}
