package cli

import (
	"context"
	"encoding/json"
	"fmt"

	"agenthub/app/api"
	"agenthub/backend"
)

// printConflicts lists a run's workspace conflicts after `runs show`: files
// a crash left holding neither their content before a change nor what the
// change wrote (run.workspace.conflict, docs/RELIABILITY.md). Only the user
// can say which content is right, so each is shown with the command that
// settles it, or with its resolution once settled.
func printConflicts(e *Env, runs *api.RunsAPI, runID string) error {
	evs, err := runs.Events(runID, 0, 0)
	if err != nil {
		return err
	}
	resolved := map[string]string{}
	for _, ev := range evs {
		if ev.Type != backend.EvWorkspaceConflictResolved {
			continue
		}
		var r backend.WorkspaceConflictResolved
		if err := json.Unmarshal(ev.Payload, &r); err != nil {
			return fmt.Errorf("read conflict resolution %d of run %s: %w", ev.Sequence, runID, err)
		}
		resolved[r.IntentID] = r.Choice + " by " + r.Actor
	}
	for _, ev := range evs {
		if ev.Type != backend.EvWorkspaceConflict {
			continue
		}
		var c backend.WorkspaceConflict
		if err := json.Unmarshal(ev.Payload, &c); err != nil {
			return fmt.Errorf("read conflict event %d of run %s: %w", ev.Sequence, runID, err)
		}
		fmt.Fprintf(e.Stdout, "\nWorkspace conflict %s (%s, checkpoint %s): %s.\n", c.IntentID, c.Code,
			c.CheckpointID, c.Message)
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
		if how, ok := resolved[c.IntentID]; ok {
			fmt.Fprintf(e.Stdout, "  Resolved: %s\n", how)
			continue
		}
		fmt.Fprintf(e.Stdout, "  Next: %s\n", c.Next)
		fmt.Fprintf(e.Stdout, "  Resolve: agenthub conflicts resolve %s %s --keep | --restore\n", runID, c.IntentID)
	}
	return nil
}

// runConflicts settles a workspace conflict: conflicts resolve RUN INTENT
// --keep (the disk stays as it is) or --restore (each file's content from
// before the change is put back; refused when a file changed since).
func runConflicts(ctx context.Context, e *Env, args []string) error {
	usage := "conflicts resolve RUN INTENT --keep|--restore [--json] (ids are listed by `agenthub runs show RUN`)"
	if len(args) == 0 || args[0] != "resolve" {
		return usagef("%s", usage)
	}
	fl, home := flags(e, "conflicts resolve")
	keep := fl.Bool("keep", false, "keep what is on disk now")
	restore := fl.Bool("restore", false, "restore each file's content from before the change")
	asJSON := fl.Bool("json", false, "print JSON")
	words, err := positional(fl, args[1:])
	if err != nil {
		return err
	}
	if len(words) != 2 || *keep == *restore {
		return usagef("%s", usage)
	}
	choice := backend.ConflictKeep
	if *restore {
		choice = backend.ConflictRestore
	}
	core, err := openCore(ctx, e, *home, backend.SurfaceCLI)
	if err != nil {
		return err
	}
	defer core.Close()
	res, err := api.NewConflictsAPI(core).Resolve(words[0], words[1], choice)
	if err != nil {
		return err
	}
	text := fmt.Sprintf("Conflict %s resolved: the files keep what is on disk.", words[1])
	if choice == backend.ConflictRestore {
		text = fmt.Sprintf("Conflict %s resolved: %d file(s) hold their content from before the change", words[1], len(res.Files))
		if res.RestoreCheckpointID != "" {
			text += fmt.Sprintf(" (checkpoint %s: agenthub undo --workspace W %s)", res.RestoreCheckpointID,
				res.RestoreCheckpointID)
		}
		text += "."
	}
	return printOne(e, *asJSON, res, text)
}
