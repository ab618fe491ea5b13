package cli

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strings"

	"agenthub/app/acpagent"
	"agenthub/app/api"
	"agenthub/backend"
)

// runACP is `agenthub acp`: AgentHub as an ACP agent on standard input and
// output, for editors that speak the Agent Client Protocol. Like every
// command that acts it runs inside the data directory's engine (forwarded,
// the engine started if none runs), so its runs are the engine's: the
// window and browser mode show them, and their decisions are audited with
// the surface "acp". Nothing but protocol messages goes to stdout.
func runACP(ctx context.Context, e *Env, args []string) error {
	fl, home := flags(e, "acp")
	profile := fl.String("profile", "", "agent profile each prompt runs with (default: the default profile)")
	playbook := fl.String("playbook", "", "run each prompt with a playbook file (the script runtime) instead")
	if err := parse(fl, args); err != nil {
		return err
	}
	if fl.NArg() > 0 {
		return usagef("acp takes no arguments, got %q: it speaks ACP on stdin and stdout", fl.Arg(0))
	}
	if *playbook != "" && *profile != "" {
		return usagef("use --profile or --playbook, not both")
	}
	core, err := openCore(ctx, e, *home, backend.SurfaceACP)
	if err != nil {
		return err
	}
	defer core.Close()
	if *profile != "" {
		// Said now, on stderr, rather than at the editor's first prompt.
		if err := knownProfile(core, *profile); err != nil {
			return err
		}
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
	log := slog.New(slog.NewTextHandler(e.Stderr, &slog.HandlerOptions{Level: logLevel(e.Getenv)}))
	return acpagent.Serve(ctx, acpagent.Config{Core: core, Profile: *profile, Version: e.Version, Log: log},
		e.Stdin, e.Stdout)
}

// knownProfile refuses a profile name the engine does not have.
func knownProfile(core *api.Core, name string) error {
	list, err := api.NewRunsAPI(core).Profiles()
	if err != nil {
		return err
	}
	names := make([]string, 0, len(list))
	for _, p := range list {
		if p.Name == name {
			return nil
		}
		names = append(names, p.Name)
	}
	return &backend.Error{Code: backend.CodeInvalidInput, Message: fmt.Sprintf("unknown profile %q", name),
		Next: "Choose one of: " + strings.Join(names, ", ") + " (agenthub profiles lists them)."}
}
