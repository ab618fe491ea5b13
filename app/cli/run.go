package cli

import (
	"bufio"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"agenthub/app/api"
	"agenthub/backend"
	"agenthub/workspace"
)

func runRun(ctx context.Context, e *Env, args []string) error {
	fl, home := flags(e, "run")
	wsPath := fl.String("workspace", "", "allowlisted workspace to run in (required)")
	profile := fl.String("profile", "", "agent profile (default: demo, the scripted tour)")
	playbook := fl.String("playbook", "", "run a playbook file with the script runtime")
	onApproval := fl.String("on-approval", "", "prompt | approve | reject (default: prompt on a TTY, else leave pending and exit 3)")
	asJSON := fl.Bool("json", false, "print the event envelopes as NDJSON on stdout")
	session := fl.String("session", "", "continue this session (default: a new one)")
	noQueue := fl.Bool("no-queue", false, "refuse with active_run_exists instead of queueing behind a busy session")
	isolation := fl.String("isolation", "", "worktree (its own git worktree and branch) | checkout (default: the workspace's)")
	base := fl.String("base", "", "with --isolation worktree: the commit the run's branch starts from (default HEAD)")
	task, err := parseInterleaved(fl, args)
	if err != nil {
		return err
	}
	if *wsPath == "" {
		return usagef("run needs --workspace PATH")
	}
	if task == "" {
		return usagef(`run needs a task, e.g. agenthub run --workspace . "tour this repository"`)
	}
	if *playbook != "" && *profile != "" {
		return usagef("use --profile or --playbook, not both")
	}
	mode, err := chooseMode(*onApproval, e.Stdin)
	if err != nil {
		return err
	}
	core, err := openCore(ctx, e, *home, backend.SurfaceCLI)
	if err != nil {
		return err
	}
	defer core.Close()
	ws, err := findWorkspace(core, *wsPath)
	if err != nil {
		return err
	}
	if *playbook != "" {
		text, err := os.ReadFile(*playbook)
		if err != nil {
			return backend.Errorf(backend.CodeInvalidInput, "read the playbook %s: %v", *playbook, reasonOf(err))
		}
		if *profile, err = core.AddPlaybook(text); err != nil {
			return err
		}
	}
	run, err := api.NewRunsAPI(core).Start(api.StartRun{WorkspaceID: ws.ID, SessionID: *session, Profile: *profile,
		Task: task, NoQueue: *noQueue, Isolation: *isolation, Base: *base})
	if err != nil {
		return err
	}
	return newFollower(e, core, *asJSON, mode).follow(ctx, run.ID, 0)
}

func newFollower(e *Env, core *api.Core, asJSON bool, mode approvalMode) *follower {
	in := e.Stdin
	if in == nil {
		in = strings.NewReader("")
	}
	grace := 3 * time.Second
	if v, err := time.ParseDuration(e.Getenv("AGENTHUB_DETACH_GRACE")); err == nil && v > 0 {
		grace = v
	}
	return &follower{core: core, out: e.Stdout, json: asJSON, mode: mode, decided: map[string]bool{},
		prompt: &prompter{in: bufio.NewReader(in), out: e.Stderr, err: e.Stderr},
		intr:   e.intr, grace: grace, errOut: e.Stderr}
}

// chooseMode applies the rule: prompt on a TTY; without one and without
// --on-approval, approvals stay pending and the command exits 3.
func chooseMode(flagValue string, stdin io.Reader) (approvalMode, error) {
	switch approvalMode(flagValue) {
	case modePrompt, modeApprove, modeReject:
		return approvalMode(flagValue), nil
	case "":
		if isTerminal(stdin) {
			return modePrompt, nil
		}
		return modeLeave, nil
	}
	return "", usagef("--on-approval %q: use prompt, approve or reject", flagValue)
}

// findWorkspace maps a path (or id) to its allowlisted workspace; anything
// else fails closed with workspace_outside_allowlist.
func findWorkspace(core *api.Core, target string) (backend.Workspace, error) {
	list, err := api.NewWorkspacesAPI(core).List()
	if err != nil {
		return backend.Workspace{}, err
	}
	canon, _ := workspace.Canonical(target)
	for _, w := range list {
		if w.ID == target || (canon != "" && w.Path == canon) {
			return w, nil
		}
	}
	next := "Add it first: agenthub workspace add " + target
	if len(list) == 0 {
		next = "The allowlist is empty, so every run is refused. " + next
	}
	return backend.Workspace{}, &backend.Error{Code: backend.FailOutsideAllowlist,
		Message: fmt.Sprintf("%s is not an allowlisted workspace", target), Next: next}
}

// parseInterleaved parses flags that may stand before or after the
// positional words, and joins the words into one task.
func parseInterleaved(fl *flag.FlagSet, args []string) (string, error) {
	words, err := positional(fl, args)
	return strings.Join(words, " "), err
}

// positional parses flags anywhere among args and returns the other words.
func positional(fl *flag.FlagSet, args []string) ([]string, error) {
	var words []string
	for {
		if err := parse(fl, args); err != nil {
			return nil, err
		}
		if fl.NArg() == 0 {
			return words, nil
		}
		words = append(words, fl.Arg(0))
		args = fl.Args()[1:]
	}
}

func reasonOf(err error) string {
	var pe *os.PathError
	if errors.As(err, &pe) {
		return pe.Err.Error()
	}
	return err.Error()
}
