package app

import (
	"encoding/json"
	"fmt"
	"testing"

	"agenthub/backend"
)

// TestFormatErrorIsText: the Wails runtime rejects a call with
// new Error(value); an object there becomes "[object Object]", so every
// bound method's error must travel as the body's JSON text (issue 21: an
// already-listed folder showed internal_error "[object Object]").
func TestFormatErrorIsText(t *testing.T) {
	for _, err := range []error{
		backend.Errorf(backend.CodeWorkspaceExists, "workspace ~/src/x is already in the allowlist"),
		fmt.Errorf("add: %w", backend.Errorf(backend.CodeInvalidInput, "bad")),
		fmt.Errorf("something internal at /root/secret/path"),
	} {
		v := formatError(err)
		text, ok := v.(string)
		if !ok {
			t.Fatalf("formatError(%v) = %T, want a string", err, v)
		}
		var body struct{ Code, Message, Next string }
		if err := json.Unmarshal([]byte(text), &body); err != nil || body.Code == "" || body.Next == "" {
			t.Fatalf("formatError = %q: %v", text, err)
		}
		if body.Code == string(backend.FailInternal) && body.Message != "an internal error occurred" {
			t.Fatalf("an internal cause leaked: %q", text)
		}
	}
}
