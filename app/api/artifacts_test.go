package api

import "testing"

// TestOpenArtifactsFromArgs: `agenthub window --artifacts RUN` (and a
// second launch forwarding it) asks the window to show the run's artifacts.
func TestOpenArtifactsFromArgs(t *testing.T) {
	for _, args := range [][]string{{"window", "--artifacts", "run_1"}, {"--artifacts=run_1", "--home", "/x"}, {"-artifacts", "run_1"}} {
		if got, ok := OpenRequestFromArgs(args); !ok || got.ArtifactsRunID != "run_1" || got.ApprovalID != "" {
			t.Errorf("%v: %+v %v", args, got, ok)
		}
	}
	if got, ok := OpenRequestFromArgs([]string{"window", "--artifacts"}); ok {
		t.Errorf("--artifacts without a run: %+v", got)
	}
}
