package cli

import (
	"context"
	"encoding/json"
	"fmt"

	"agenthub/app/api"
	"agenthub/backend"
)

func runAudit(ctx context.Context, e *Env, args []string) error {
	if len(args) == 0 || (args[0] != "verify" && args[0] != "export") {
		return usagef("audit needs a subcommand: verify [--json] or export")
	}
	sub := args[0]
	fl, home := flags(e, "audit "+sub)
	asJSON := fl.Bool("json", false, "verify: print JSON")
	if err := parse(fl, args[1:]); err != nil {
		return err
	}
	if fl.NArg() != 0 {
		return usagef("audit %s takes no arguments", sub)
	}
	core, err := openCore(ctx, e, *home, backend.SurfaceCLI)
	if err != nil {
		return err
	}
	defer core.Close()
	audit := api.NewAuditAPI(core)
	var v api.AuditVerify
	if sub == "export" {
		v, err = api.ExportAudit(audit, e.Stdout)
	} else {
		v, err = audit.Verify()
	}
	if err != nil {
		return err
	}
	switch {
	case sub == "verify" && *asJSON:
		_ = json.NewEncoder(e.Stdout).Encode(v)
	case sub == "verify" && v.OK:
		fmt.Fprintf(e.Stdout, "audit chain OK (head %s)\n", v.Head)
	case sub == "verify":
		fmt.Fprintf(e.Stdout, "audit chain BROKEN at entry %d: it was changed or removed after it was written\n", v.BrokenSeq)
	}
	if !v.OK {
		if sub == "export" {
			fmt.Fprintf(e.Stderr, "agenthub: the exported chain is broken at entry %d\n", v.BrokenSeq)
		}
		return codedExit{ExitFailed}
	}
	return nil
}
