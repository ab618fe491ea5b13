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

// TestErrorOfNotFoundSaysWhat: a missing run, workspace or approval is named
// with the id asked for; an id that is not one of ours (it could be a path)
// is left out.
func TestErrorOfNotFoundSaysWhat(t *testing.T) {
	for _, c := range []struct {
		err  error
		want string
	}{
		{&backend.NotFound{Kind: "run", ID: "run_01a20a287c6b7d31b9444f2d04a6f329"}, "no run run_01a20a287c6b7d31b9444f2d04a6f329"},
		{fmt.Errorf("remove workspace: %w", &backend.NotFound{Kind: "workspace", ID: "ws_01a20a287c4a7ffc"}),
			"no workspace ws_01a20a287c4a7ffc"},
		{&backend.NotFound{Kind: "approval", ID: "/home/someone/secret"}, "no such approval"},
		{fmt.Errorf("ticket: %w", backend.ErrNotFound), "no such item"},
	} {
		body := ErrorOf(c.err)
		if body.Code != backend.CodeNotFound || body.Message != c.want {
			t.Errorf("ErrorOf(%v) = %+v, want not_found %q", c.err, body, c.want)
		}
		if !errors.Is(c.err, backend.ErrNotFound) {
			t.Errorf("errors.Is(%v, ErrNotFound) = false", c.err)
		}
	}
}
