package cli

import (
	"context"
	"encoding/json"
	"fmt"

	"agenthub/app/api"
	"agenthub/backend"
	"agenthub/backend/store"
)

func runAudit(ctx context.Context, e *Env, args []string) error {
	if len(args) == 0 || (args[0] != "verify" && args[0] != "export") {
		return usagef("audit needs a subcommand: verify [--json] [--head SEQ:HASH] or export")
	}
	sub := args[0]
	fl, home := flags(e, "audit "+sub)
	asJSON := fl.Bool("json", false, "verify: print JSON")
	headFlag := fl.String("head", "", "verify: also check that the chain still holds this exported head (SEQ:HASH)")
	if err := parse(fl, args[1:]); err != nil {
		return err
	}
	if fl.NArg() != 0 {
		return usagef("audit %s takes no arguments", sub)
	}
	var head *store.ExportedHead
	if *headFlag != "" {
		if sub != "verify" {
			return usagef("--head belongs to audit verify")
		}
		seq, hash, err := store.ParseHead(*headFlag)
		if err != nil {
			return &backend.Error{Code: backend.CodeInvalidInput, Message: err.Error(), Err: err,
				Next: "Pass the head `agenthub audit export` printed, e.g. --head 195:3f2a… (all 64 digits)."}
		}
		head = &store.ExportedHead{Seq: seq, Hash: hash}
	}
	core, err := openCore(ctx, e, *home, backend.SurfaceCLI)
	if err != nil {
		return err
	}
	defer core.Close()
	if sub == "export" {
		v, err := api.ExportAudit(api.NewAuditAPI(core), e.Stdout)
		if err != nil {
			return err
		}
		if !v.OK {
			fmt.Fprintf(e.Stderr, "agenthub: the exported chain is broken at entry %d; run `agenthub audit verify`\n",
				v.BrokenSeq)
			return codedExit{ExitFailed}
		}
		if r, err := core.Store().CheckAudit(ctx, nil); err == nil {
			fmt.Fprintf(e.Stderr, "audit head %d:%s\nkeep it elsewhere; check later with `agenthub audit verify --head %d:%s`\n",
				r.Entries, r.Head, r.Entries, r.Head)
		}
		return nil
	}
	r, err := core.Store().CheckAudit(ctx, head)
	if err != nil {
		return err
	}
	switch {
	case *asJSON:
		_ = json.NewEncoder(e.Stdout).Encode(r)
	case r.OK:
		fmt.Fprintf(e.Stdout, "audit chain OK: %d entries, head %d:%s\n", r.Entries, r.Entries, r.Head)
	default:
		fmt.Fprintf(e.Stdout, "audit chain BROKEN at entry %d:\n", r.BrokenSeq)
		for _, p := range r.Problems {
			fmt.Fprintf(e.Stdout, "  - %s\n", p)
		}
		fmt.Fprintln(e.Stdout, "next: restore the database from a backup you trust; docs/STORAGE.md explains each finding")
	}
	if !r.OK {
		return codedExit{ExitFailed}
	}
	return nil
}
