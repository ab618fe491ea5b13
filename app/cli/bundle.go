package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"agenthub/app/api"
	"agenthub/backend"
)

// runBundle handles `runs export RUN -o FILE`, `runs verify FILE` and `runs
// import FILE`; handled is false for any other runs subcommand.
func runBundle(ctx context.Context, e *Env, args []string) (handled bool, err error) {
	if len(args) == 0 {
		return false, nil
	}
	switch args[0] {
	case "export":
		return true, runsExport(ctx, e, args[1:])
	case "verify":
		return true, runsVerify(e, args[1:])
	case "import":
		return true, runsImport(ctx, e, args[1:])
	}
	return false, nil
}

func runsExport(ctx context.Context, e *Env, args []string) error {
	fl, home := flags(e, "runs export")
	out := fl.String("o", "", "write the bundle (a zip) to FILE")
	asJSON := fl.Bool("json", false, "print the manifest as JSON")
	words, err := positional(fl, args)
	if err != nil {
		return err
	}
	if len(words) != 1 || *out == "" {
		return usagef("runs export takes a run and -o FILE: agenthub runs export RUN -o FILE")
	}
	core, err := openCore(ctx, e, *home, backend.SurfaceCLI)
	if err != nil {
		return err
	}
	defer core.Close()
	data, m, err := api.ExportRunBytes(core, words[0])
	if err != nil {
		return err
	}
	if err := writeFileAtomic(*out, data); err != nil {
		return &backend.Error{Code: backend.CodeInvalidInput, Err: err,
			Message: "the bundle could not be written to " + filepath.Base(*out),
			Next:    "Choose a folder you can write to and try again."}
	}
	if *asJSON {
		return json.NewEncoder(e.Stdout).Encode(m)
	}
	fmt.Fprintf(e.Stdout, "Exported run %s to %s: %d events, %d audit entries, %d files.\n", m.Run.ID,
		filepath.Base(*out), m.Events.Count, m.Audit.Entries, len(m.Files))
	if m.Audit.Head != nil {
		fmt.Fprintf(e.Stdout, "Audit head %d:%s — confirm it here later with `agenthub audit verify --head %d:%s`.\n",
			m.Audit.Head.Seq, m.Audit.Head.Hash, m.Audit.Head.Seq, m.Audit.Head.Hash)
	}
	fmt.Fprintf(e.Stdout, "Check it anywhere with: agenthub runs verify %s\n", filepath.Base(*out))
	return nil
}

func runsVerify(e *Env, args []string) error {
	fl, _ := flags(e, "runs verify")
	asJSON := fl.Bool("json", false, "print the report as JSON")
	words, err := positional(fl, args)
	if err != nil {
		return err
	}
	f, size, err := bundleArg("verify", words)
	if err != nil {
		return err
	}
	defer f.Close()
	r, err := api.VerifyBundle(f, size)
	if err != nil {
		return err
	}
	if *asJSON {
		if err := json.NewEncoder(e.Stdout).Encode(r); err != nil {
			return err
		}
	} else {
		verdict := "OK"
		if !r.OK {
			verdict = "BROKEN"
		}
		fmt.Fprintf(e.Stdout, "bundle %s: run %s (%s), %s\n", verdict, r.Run.ID, r.Run.State, clip(r.Run.Task, 60))
		for _, c := range r.Checked {
			fmt.Fprintf(e.Stdout, "  ok: %s\n", c)
		}
		for _, p := range r.Problems {
			fmt.Fprintf(e.Stdout, "  BROKEN: %s\n", p)
		}
		fmt.Fprintf(e.Stdout, "What this proves: %s\n", r.Proves)
	}
	if !r.OK {
		return codedExit{ExitFailed}
	}
	return nil
}

func runsImport(ctx context.Context, e *Env, args []string) error {
	fl, home := flags(e, "runs import")
	asJSON := fl.Bool("json", false, "print the imported run as JSON")
	words, err := positional(fl, args)
	if err != nil {
		return err
	}
	f, size, err := bundleArg("import", words)
	if err != nil {
		return err
	}
	defer f.Close()
	core, err := openCore(ctx, e, *home, backend.SurfaceCLI)
	if err != nil {
		return err
	}
	defer core.Close()
	r, err := api.ImportRun(core, f, size)
	if err != nil {
		return err
	}
	if *asJSON {
		return json.NewEncoder(e.Stdout).Encode(r)
	}
	fmt.Fprintf(e.Stdout, "Imported run %s (%s, %d events), read-only: it cannot be resumed here.\n", r.ID, r.State,
		r.LastSequence)
	fmt.Fprintf(e.Stdout, "Read it with: agenthub runs show %s; agenthub runs events %s\n", r.ID, r.ID)
	return nil
}

// writeFileAtomic writes data to a temporary file beside path, then renames
// it into place: a failure never leaves half a bundle.
func writeFileAtomic(path string, data []byte) error {
	tmp, err := os.CreateTemp(filepath.Dir(path), ".agenthub-export-*")
	if err != nil {
		return err
	}
	_, err = tmp.Write(data)
	if err == nil {
		err = tmp.Sync()
	}
	if cerr := tmp.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Chmod(tmp.Name(), 0o600)
	}
	if err == nil {
		err = os.Rename(tmp.Name(), path)
	}
	if err != nil {
		_ = os.Remove(tmp.Name())
	}
	return err
}

// bundleArg opens the one bundle file a command takes.
func bundleArg(cmd string, words []string) (*os.File, int64, error) {
	if len(words) != 1 {
		return nil, 0, usagef("runs %s takes one bundle file: agenthub runs %s FILE", cmd, cmd)
	}
	f, err := os.Open(words[0])
	if err != nil {
		return nil, 0, &backend.Error{Code: backend.CodeNotFound, Err: err, Message: "cannot read " + filepath.Base(words[0]),
			Next: "Check the file name; a bundle is what `agenthub runs export RUN -o FILE` wrote."}
	}
	fi, err := f.Stat()
	if err != nil {
		f.Close()
		return nil, 0, fmt.Errorf("runs %s: %w", cmd, err)
	}
	return f, fi.Size(), nil
}
