package cli

import (
	"context"
	"fmt"
	"os"

	"agenthub/backend"
	"agenthub/backend/approval"
)

func runPolicy(ctx context.Context, e *Env, args []string) error {
	if len(args) > 0 && (args[0] == "rules" || args[0] == "revoke") {
		return runPolicyRules(ctx, e, args[0], args[1:]) // policyrules.go
	}
	if len(args) == 0 || (args[0] != "check" && args[0] != "explain") {
		return usagef(`policy needs a subcommand: check --workspace W | --file F, explain --workspace W "<command or path>", rules --workspace W [--json], or revoke --workspace W KEY`)
	}
	sub := args[0]
	fl, home := flags(e, "policy "+sub)
	wsPath := fl.String("workspace", "", "allowlisted workspace whose .agenthub/policy.toml to use")
	file := fl.String("file", "", "check: a policy file to check instead of a workspace's")
	words, err := positional(fl, args[1:])
	if err != nil {
		return err
	}
	switch {
	case sub == "explain" && (len(words) != 1 || *wsPath == ""):
		return usagef(`policy explain --workspace W "<command or path>"`)
	case sub == "check" && len(words) != 0:
		return usagef("policy check takes no arguments")
	case sub == "check" && (*wsPath == "") == (*file == ""):
		return usagef("policy check needs --workspace W or --file F")
	}
	if *file != "" {
		p, err := policyFromFile(*file)
		if err != nil {
			return err
		}
		return printCheck(e, p)
	}
	ws, gate, done, err := workspaceGate(ctx, e, *home, *wsPath)
	if err != nil {
		return err
	}
	defer done()
	if sub == "explain" {
		a := approval.ActionFromText(words[0])
		fmt.Fprint(e.Stdout, approval.ExplainResult(gate.Decide(ws.ID, a), a))
		return nil
	}
	p, err := gate.Policy(ws.ID)
	if err != nil {
		fmt.Fprintf(e.Stdout, "FAIL %v\nThe gate cannot use this policy, so every gated action asks.\n", err)
		return codedExit{ExitFailed}
	}
	return printCheck(e, p)
}

func printCheck(e *Env, p *approval.Policy) error {
	failures := p.Check()
	for _, f := range failures {
		fmt.Fprintf(e.Stdout, "FAIL %s\n", f)
	}
	if len(failures) > 0 {
		fmt.Fprintf(e.Stdout, "%d example(s) do not behave as declared.\n", len(failures))
		return codedExit{ExitFailed}
	}
	fmt.Fprintln(e.Stdout, "policy OK: every example behaves as declared.")
	return nil
}

// policyFromFile reads a policy file given by path with the gate's own
// reader: over 1 MiB is an error, as it is for the gate.
func policyFromFile(path string) (*approval.Policy, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, backend.Errorf(backend.CodeInvalidInput, "read the policy file %s: %v", path, reasonOf(err))
	}
	defer f.Close()
	p, err := approval.ReadPolicy(f)
	if err != nil {
		return nil, &backend.Error{Code: backend.CodeInvalidInput, Message: err.Error(), Err: err,
			Next: "Fix the policy file; docs/POLICY.md describes the format."}
	}
	return p, nil
}

// workspaceGate finds an allowlisted workspace and returns the policy gate
// runs use for it, so check and explain load and decide exactly as the
// gate does (a broken, oversized or symlinked policy asks).
func workspaceGate(ctx context.Context, e *Env, home, target string) (backend.Workspace, *approval.Gate, func(), error) {
	core, err := openCore(ctx, e, home, backend.SurfaceCLI)
	if err != nil {
		return backend.Workspace{}, nil, nil, err
	}
	ws, err := findWorkspace(core, target)
	if err != nil {
		core.Close()
		return backend.Workspace{}, nil, nil, err
	}
	gate := approval.NewGate(func(id string) (string, error) {
		if id != ws.ID {
			return "", fmt.Errorf("unknown workspace %s", id)
		}
		return ws.Path, nil
	}).WithRules(core.Rules()) // the data directory's rules too, as the engine's gate reads them
	return ws, gate, func() { core.Close() }, nil
}
