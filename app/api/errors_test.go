package api

import (
	"errors"
	"fmt"
	"testing"

	"agenthub/backend"
)

func TestErrorOfNext(t *testing.T) {
	install := "npm install -g @google/gemini-cli@0.61.0"
	cases := []struct {
		name         string
		err          error
		code         backend.FailureCode
		next         string
		nextSpecific bool
	}{
		{"own next step", fmt.Errorf("start: %w", &backend.Error{Code: backend.FailRuntimeUnavailable,
			Message: "gemini is not installed", Next: install}), backend.FailRuntimeUnavailable, install, true},
		{"code's default", &backend.Error{Code: backend.FailRuntimeUnavailable, Message: "gone"},
			backend.FailRuntimeUnavailable, backend.Recovery[backend.FailRuntimeUnavailable], false},
		{"not found", fmt.Errorf("run x: %w", backend.ErrNotFound), backend.CodeNotFound,
			backend.Recovery[backend.CodeNotFound], false},
		{"internal", errors.New("disk on fire"), backend.FailInternal, backend.Recovery[backend.FailInternal], false},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			body := ErrorOf(c.err)
			if body.Code != c.code || body.Next != c.next || body.NextSpecific != c.nextSpecific {
				t.Fatalf("ErrorOf = %+v, want code %s next %q specific %v", body, c.code, c.next, c.nextSpecific)
			}
		})
	}
}
