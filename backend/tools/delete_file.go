package tools

import (
	"fmt"

	"github.com/google/jsonschema-go/jsonschema"

	"agenthub/backend"
)

type deleteArgs struct {
	Path string `json:"path" jsonschema:"workspace-relative path of the file to delete"`
}

var deleteSchema = lazySchema[deleteArgs](func(s *jsonschema.Schema) {
	prop(s, "path").MinLength = jsonschema.Ptr(1)
})

const deleteDescription = `Delete one file (not a directory). The deletion is shown to the user and ` +
	`happens only after approval; the content is checkpointed so it can be restored. Paths are relative ` +
	`to the workspace root.`

// deleteOp removes a file.
type deleteOp struct{}

func (deleteOp) spec() backend.ToolSpec {
	return backend.ToolSpec{Name: DeleteFile, Description: deleteDescription, Schema: deleteSchema.Raw()}
}

func (deleteOp) schema() *argSchema { return deleteSchema }

func (deleteOp) path(a deleteArgs) string { return a.Path }

func (deleteOp) propose(_ deleteArgs, p string, _ []byte, exists bool) ([]byte, bool, error) {
	if !exists {
		return nil, false, fmt.Errorf("%s does not exist; nothing to delete", p)
	}
	return nil, true, nil
}
