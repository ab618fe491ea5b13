package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"
	"text/tabwriter"

	"agenthub/app/api"
	"agenthub/backend"
)

func runRuns(ctx context.Context, e *Env, args []string) error {
	if len(args) == 0 {
		return usagef("runs needs a subcommand: list, show RUN, events RUN, follow RUN, cancel RUN or resume RUN")
	}
	if handled, err := runBundle(ctx, e, args); handled { // bundle.go: export, verify
		return err
	}
	sub, args := args[0], args[1:]
	fl, home := flags(e, "runs "+sub)
	asJSON := fl.Bool("json", false, "print JSON (events: one envelope per line)")
	since := fl.Int64("since", 0, "events: only those with a sequence above SEQ")
	onApproval := fl.String("on-approval", "", "resume, follow: prompt | approve | reject, as for run (follow: default leave pending)")
	words, err := positional(fl, args)
	if err != nil {
		return err
	}
	want := map[string]int{"list": 0, "show": 1, "events": 1, "follow": 1, "cancel": 1, "resume": 1}
	if n, ok := want[sub]; !ok {
		return usagef("unknown runs subcommand %q: use list, show, events, follow, cancel or resume", sub)
	} else if len(words) != n {
		return usagef("runs %s takes %d argument(s)", sub, n)
	}
	core, err := openCore(ctx, e, *home, backend.SurfaceCLI)
	if err != nil {
		return err
	}
	defer core.Close()
	runs := api.NewRunsAPI(core)
	switch sub {
	case "show":
		r, err := runs.Get(words[0])
		if err != nil {
			return err
		}
		if err := printRun(e, *asJSON, r); err != nil || *asJSON {
			return err
		}
		return printConflicts(e, runs, r.ID)
	case "events":
		return printEvents(e, runs, words[0], *since, *asJSON)
	case "follow":
		mode := modeLeave
		if *onApproval != "" {
			if mode, err = chooseMode(*onApproval, e.Stdin); err != nil {
				return err
			}
		}
		if !core.IsOwner() {
			return followStored(e, runs, words[0], *since, *asJSON)
		}
		return newFollower(e, core, *asJSON, mode).follow(ctx, words[0], *since)
	case "cancel":
		r, err := runs.Cancel(words[0])
		if err != nil {
			return err
		}
		return printOne(e, *asJSON, r, fmt.Sprintf("Run %s is %s.", r.ID, r.State))
	case "resume":
		// Like run, resume follows the new run to its end, or until
		// Ctrl-C detaches from it.
		mode, err := chooseMode(*onApproval, e.Stdin)
		if err != nil {
			return err
		}
		r, err := runs.Resume(words[0])
		if err != nil {
			return err
		}
		if !*asJSON {
			fmt.Fprintf(e.Stdout, "Run %s resumes %s from its last checkpoint.\n", r.ID, words[0])
		}
		return newFollower(e, core, *asJSON, mode).follow(ctx, r.ID, 0)
	}
	list, err := runs.List("")
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(e.Stdout).Encode(list)
	}
	if len(list) == 0 {
		fmt.Fprintln(e.Stdout, `No runs yet. Start one with: agenthub run --workspace PATH "task"`)
		return nil
	}
	tw := tabwriter.NewWriter(e.Stdout, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "ID\tSTATE\tPROFILE\tAPPROVALS\tLAST EVENT\tTASK")
	for _, r := range list {
		fmt.Fprintf(tw, "%s\t%s\t%s\t%d\t%s\t%s\n", r.ID, stateLabel(r), r.Profile, r.PendingApprovals,
			r.LastEventAt, clip(r.Task, 48))
	}
	return tw.Flush()
}

func stateLabel(r backend.RunSummary) string {
	if r.Queued {
		return string(r.State) + " (queued)"
	}
	return string(r.State)
}

func printRun(e *Env, asJSON bool, r backend.RunSummary) error {
	if asJSON {
		return json.NewEncoder(e.Stdout).Encode(r)
	}
	tw := tabwriter.NewWriter(e.Stdout, 0, 4, 2, ' ', 0)
	rows := [][2]string{{"id", r.ID}, {"state", stateLabel(r)}, {"profile", r.Profile},
		{"scripted", strconv.FormatBool(r.Scripted)}, {"task", r.Task}, {"session", r.SessionID},
		{"workspace", r.WorkspaceID}, {"created", r.CreatedAt}, {"last event", r.LastEventAt},
		{"events", strconv.FormatInt(r.LastSequence, 10)}, {"pending approvals", strconv.Itoa(r.PendingApprovals)}}
	if r.DoneReason != "" {
		rows = append(rows, [2]string{"done reason", r.DoneReason})
	}
	if r.ResumedFrom != "" {
		rows = append(rows, [2]string{"resumes", r.ResumedFrom})
	}
	if r.ResumedBy != "" {
		rows = append(rows, [2]string{"resumed by", r.ResumedBy})
	}
	if r.Failure != nil {
		rows = append(rows, [2]string{"failure", string(r.Failure.Code) + ": " + r.Failure.Message},
			[2]string{"next", r.Failure.Next})
	}
	for _, row := range rows {
		fmt.Fprintf(tw, "%s\t%s\n", row[0], row[1])
	}
	return tw.Flush()
}

func printEvents(e *Env, runs *api.RunsAPI, id string, since int64, asJSON bool) error {
	f := &follower{out: e.Stdout, json: asJSON}
	return eachEvent(runs, id, since, func(ev backend.Event) {
		if asJSON {
			f.print(ev)
		} else {
			fmt.Fprintf(e.Stdout, "%6d  %s  %-24s %s\n", ev.Sequence, ev.Timestamp, ev.Type, clip(string(ev.Payload), 100))
		}
	})
}

// eachEvent calls fn with every stored event of a run after since, page by
// page.
func eachEvent(runs *api.RunsAPI, id string, since int64, fn func(backend.Event)) error {
	for {
		page, err := runs.Events(id, since, 0)
		if err != nil {
			return err
		}
		for _, ev := range page {
			fn(ev)
			since = ev.Sequence
		}
		if len(page) == 0 {
			return nil
		}
	}
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}

// followStored prints what is stored of a run when no engine runs (a
// read-only command never starts one): the events so far, then the exit
// code of its end, or 3 with the way to let it go on.
func followStored(e *Env, runs *api.RunsAPI, id string, since int64, asJSON bool) error {
	f := &follower{out: e.Stdout, json: asJSON}
	if err := eachEvent(runs, id, since, f.print); err != nil {
		return err
	}
	r, err := runs.Get(id)
	if err != nil {
		return err
	}
	switch r.State {
	case backend.RunCompleted:
		return nil
	case backend.RunFailed:
		return codedExit{ExitFailed}
	case backend.RunCancelled:
		return codedExit{ExitCanceled}
	}
	fmt.Fprintf(e.Stderr, "\nRun %s is %s, and no engine is running it now. Start the engine to let it go on: agenthub engine start\n",
		id, r.State)
	return codedExit{ExitWaiting}
}
