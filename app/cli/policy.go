package cli

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"

	"agenthub/backend"
	"agenthub/backend/approval"
	"agenthub/workspace"
)

func runPolicy(ctx context.Context, e *Env, args []string) error {
	if len(args) == 0 || (args[0] != "check" && args[0] != "explain") {
		return usagef(`policy needs a subcommand: check --workspace W | --file F, or explain --workspace W "<command or path>"`)
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
	var p *approval.Policy
	if *file != "" {
		p, err = policyFromFile(*file)
	} else {
		p, err = workspacePolicy(ctx, e, *home, *wsPath)
	}
	if err != nil {
		return err
	}
	if sub == "explain" {
		fmt.Fprint(e.Stdout, p.Explain(approval.ActionFromText(words[0])))
		return nil
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

func policyFromFile(path string) (*approval.Policy, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, backend.Errorf(backend.CodeInvalidInput, "read the policy file %s: %v", path, reasonOf(err))
	}
	return parsePolicy(data)
}

func parsePolicy(data []byte) (*approval.Policy, error) {
	p, err := approval.ParsePolicy(data)
	if err != nil {
		return nil, &backend.Error{Code: backend.CodeInvalidInput, Message: err.Error(), Err: err,
			Next: "Fix the policy file; docs/POLICY.md describes the format."}
	}
	return p, nil
}

// workspacePolicy reads the policy of an allowlisted workspace through its
// rooted file access; a workspace without one has the default policy.
func workspacePolicy(ctx context.Context, e *Env, home, target string) (*approval.Policy, error) {
	core, err := openCore(ctx, e, home, backend.SurfaceCLI)
	if err != nil {
		return nil, err
	}
	defer core.Close()
	ws, err := findWorkspace(core, target)
	if err != nil {
		return nil, err
	}
	root, err := workspace.Open(ws.Path)
	if err != nil {
		return nil, fmt.Errorf("open workspace %s: %w", ws.DisplayPath, err)
	}
	defer root.Close()
	data, err := root.ReadFile(approval.PolicyPath)
	if errors.Is(err, fs.ErrNotExist) {
		return approval.DefaultPolicy(), nil
	}
	if err != nil {
		return nil, fmt.Errorf("read %s: %w", approval.PolicyPath, err)
	}
	return parsePolicy(data)
}
