package tools

import (
	"errors"
	"fmt"
	"strings"

	"github.com/google/jsonschema-go/jsonschema"

	"agenthub/backend"
)

type editArgs struct {
	Path      string `json:"path" jsonschema:"workspace-relative path of an existing file"`
	OldString string `json:"old_string" jsonschema:"the exact text to replace, including whitespace and indentation; it must occur exactly once in the file"`
	NewString string `json:"new_string" jsonschema:"the text that replaces old_string"`
}

var editSchema = lazySchema[editArgs](func(s *jsonschema.Schema) {
	prop(s, "path").MinLength = jsonschema.Ptr(1)
	prop(s, "old_string").MinLength = jsonschema.Ptr(1)
})

const editDescription = `Replace one exact occurrence of old_string with new_string in an existing ` +
	`file. old_string must match the file byte for byte (copy it from read_file output, without the ` +
	`header line) and occur exactly once; include surrounding lines to make it unique. The change is ` +
	`shown to the user as a diff and applied only after approval.`

// editOp replaces the one occurrence of a string.
type editOp struct{}

func (editOp) spec() backend.ToolSpec {
	return backend.ToolSpec{Name: EditFile, Description: editDescription, Schema: editSchema.Raw()}
}

func (editOp) schema() *argSchema { return editSchema }

func (editOp) path(a editArgs) string { return a.Path }

func (editOp) propose(a editArgs, p string, cur []byte, exists bool) ([]byte, bool, error) {
	if !exists {
		return nil, false, fmt.Errorf("%s does not exist; use write_file to create it", p)
	}
	if a.OldString == a.NewString {
		return nil, false, errors.New("old_string and new_string are identical; nothing to change")
	}
	text := string(cur)
	switch n := occurrences(text, a.OldString); n {
	case 1:
	case 0:
		return nil, false, fmt.Errorf("old_string was not found in %s; read the file and copy the exact text, "+
			"including whitespace and line breaks", p)
	default:
		return nil, false, fmt.Errorf("old_string matches %d times in %s; it must match exactly once: "+
			"include more surrounding lines to make it unique", n, p)
	}
	return []byte(strings.Replace(text, a.OldString, a.NewString, 1)), false, nil
}

// occurrences counts the positions where sub starts, overlapping ones too:
// "aa" occurs twice in "aaa", which is ambiguous for an edit.
func occurrences(s, sub string) int {
	n := 0
	for i := 0; ; {
		j := strings.Index(s[i:], sub)
		if j < 0 {
			return n
		}
		n++
		i += j + 1
		if i > len(s) {
			return n
		}
	}
}
