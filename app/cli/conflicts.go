package cli

import (
	"encoding/json"
	"fmt"

	"agenthub/app/api"
	"agenthub/backend"
)

// printConflicts lists a run's workspace conflicts after `runs show`: files
// a crash left holding neither their content before a change nor what the
// change wrote (run.workspace.conflict, docs/RELIABILITY.md). Only the user
// can say which content is right, so each is shown with its next step.
func printConflicts(e *Env, runs *api.RunsAPI, runID string) error {
	evs, err := runs.Events(runID, 0, 0)
	if err != nil {
		return err
	}
	for _, ev := range evs {
		if ev.Type != backend.EvWorkspaceConflict {
			continue
		}
		var c backend.WorkspaceConflict
		if err := json.Unmarshal(ev.Payload, &c); err != nil {
			return fmt.Errorf("read conflict event %d of run %s: %w", ev.Sequence, runID, err)
		}
		fmt.Fprintf(e.Stdout, "\nWorkspace conflict (%s, checkpoint %s): %s.\n", c.Code, c.CheckpointID, c.Message)
		for _, f := range c.Files {
			side := "neither"
			switch f.Found {
			case f.Before:
				side = "its content before the change"
			case f.After:
				side = "the change's content"
			}
			fmt.Fprintf(e.Stdout, "  %s: holds %s\n", f.Path, side)
		}
		fmt.Fprintf(e.Stdout, "  Next: %s\n", c.Next)
	}
	return nil
}
