package engine

import (
	"context"
	"errors"
	"path/filepath"
	"slices"
	"testing"

	"agenthub/backend"
)

// failingModel fails every request with a runtime's error.
type failingModel struct{ err error }

func (m failingModel) Stream(context.Context, backend.ModelRequest, func(string)) (backend.ModelResponse, error) {
	return backend.ModelResponse{}, m.err
}

// TestRuntimeFailureEventPrecedesRunFailed: a runtime that is unavailable
// shows as runtime.unavailable, with its code and message, right before
// run.failed; a model's own error does not.
func TestRuntimeFailureEventPrecedesRunFailed(t *testing.T) {
	tests := []struct {
		name string
		err  error
		want backend.EventType // "" = no runtime event
	}{
		{"unavailable", &backend.Error{Code: backend.FailRuntimeUnavailable, Message: "the CLI is not installed"},
			backend.EvRuntimeUnavailable},
		{"model error", errors.New("bad gateway"), ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := newFixture(t, filepath.Join(t.TempDir(), "a.db"), &script{}, 4)
			defer f.close(t)
			f.e.AddProfile("broken", Profile{Runtime: "native", Model: failingModel{tt.err}, Stop: DefaultStop})
			r, err := f.e.Start(t.Context(), StartRequest{WorkspaceID: "ws_1", Task: "t", Profile: "broken"})
			if err != nil {
				t.Fatal(err)
			}
			if got := f.waitTerminal(t, r.ID); got.State != backend.RunFailed {
				t.Fatalf("run ended %s", got.State)
			}
			types := f.types(t, r.ID)
			i := slices.Index(types, backend.EvRuntimeUnavailable)
			switch {
			case tt.want == "" && i >= 0:
				t.Fatalf("a model error recorded %s: %v", backend.EvRuntimeUnavailable, types)
			case tt.want != "" && (i < 0 || types[len(types)-1] != backend.EvRunFailed || i != len(types)-2):
				t.Fatalf("want %s right before run.failed: %v", tt.want, types)
			}
		})
	}
}
