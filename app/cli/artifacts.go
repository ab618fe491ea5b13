package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"agenthub/app/api"
	"agenthub/backend"
)

// runArtifacts is `agenthub artifacts list|show|export|review` (issue 18).
// list, show and export only read the store (readOnlySubcommands): with no
// engine up they run here as a reader and never start or recover anything;
// review writes, so it goes to the engine.
func runArtifacts(ctx context.Context, e *Env, args []string) error {
	if len(args) == 0 || (args[0] != "list" && args[0] != "show" && args[0] != "export" && args[0] != "review") {
		return usagef("artifacts needs a subcommand: list [--run RUN] [--workspace W] [--kind K] [--json], show ID, export ID -o FILE, review ID")
	}
	sub := args[0]
	fl, home := flags(e, "artifacts "+sub)
	asJSON := fl.Bool("json", false, "print JSON")
	run := fl.String("run", "", "list: only the artifacts of this run")
	ws := fl.String("workspace", "", "list: only the artifacts of this workspace (id, name or path)")
	kind := fl.String("kind", "", "list: only this kind (document, image, screenshot, html, pdf, file)")
	from := fl.String("from", "", "list: only artifacts made from this date or timestamp (e.g. 2026-11-01)")
	to := fl.String("to", "", "list: only artifacts made before this date or timestamp")
	out := fl.String("o", "", "export: the file to write (it must not exist yet)")
	words, err := positional(fl, args[1:])
	if err != nil {
		return err
	}
	if sub == "list" && len(words) != 0 || sub != "list" && len(words) != 1 {
		return usagef("artifacts %s: list takes no arguments; show, export and review take one artifact id", sub)
	}
	if sub == "export" && *out == "" {
		return usagef("artifacts export needs the file to write: agenthub artifacts export ID -o FILE")
	}
	core, err := openCore(ctx, e, *home, backend.SurfaceCLI)
	if err != nil {
		return err
	}
	defer core.Close()
	arts := api.NewArtifactsAPI(core)
	switch sub {
	case "list":
		q := api.ArtifactQuery{RunID: *run, Kind: *kind, From: *from, To: *to}
		if *ws != "" {
			w, err := findWorkspace(core, *ws)
			if err != nil {
				return err
			}
			q.WorkspaceID = w.ID
		}
		list, err := arts.List(q)
		if err != nil {
			return err
		}
		if *asJSON {
			return json.NewEncoder(e.Stdout).Encode(list)
		}
		if len(list) == 0 {
			fmt.Fprintln(e.Stdout, "No artifacts.")
			return nil
		}
		for _, a := range list {
			fmt.Fprintf(e.Stdout, "%s  %-10s  %s  %s #%d  %8d B  %s\n", a.ID, a.Kind, a.CreatedAt, a.RunID, a.Sequence,
				a.Size, clip(a.Title, 48))
		}
		fmt.Fprintln(e.Stdout, "Show one with: agenthub artifacts show ID; save it with: agenthub artifacts export ID -o FILE")
		return nil
	case "show":
		v, err := arts.Get(words[0])
		if err != nil {
			return err
		}
		if *asJSON {
			v.DataURL, v.Preview = "", "" // the bytes belong to export
			return json.NewEncoder(e.Stdout).Encode(v)
		}
		printArtifact(e, v)
		return nil
	}
	if sub == "review" {
		a, err := arts.Review(words[0])
		if err != nil {
			return err
		}
		fmt.Fprintf(e.Stdout, "%s: privacy review %s\n", a.ID, a.Meta.Privacy)
		return nil
	}
	a, data, err := api.ArtifactBytes(core, words[0])
	if err == nil {
		err = api.Shareable(a) // a screenshot leaves only after its privacy review
	}
	if err != nil {
		return err
	}
	if err := writeNew(*out, data); err != nil {
		return err
	}
	fmt.Fprintf(e.Stdout, "wrote %s %s (%d bytes, sha256 %s) to %s\n", a.Kind, a.ID, len(data), a.SHA256,
		filepath.Base(*out))
	return nil
}

func printArtifact(e *Env, v api.ArtifactView) {
	a := v.Artifact
	fmt.Fprintf(e.Stdout, "%s  %s  %s\n", a.ID, a.Kind, a.Title)
	fmt.Fprintf(e.Stdout, "run %s (event #%d), workspace %s, made %s by %s\n", a.RunID, a.Sequence, a.WorkspaceID,
		a.CreatedAt, a.Producer)
	if a.Path != "" {
		fmt.Fprintf(e.Stdout, "source: %s\n", a.Path)
	}
	fmt.Fprintf(e.Stdout, "%s, %d bytes, sha256 %s\n", a.MediaType, a.Size, a.SHA256)
	m := a.Meta
	for _, kv := range [][2]string{{"read at", m.ReadAt}, {"language", m.Language}, {"build", m.BuildStatus},
		{"viewport", m.Viewport}, {"route", m.Route}, {"theme", m.Theme}, {"privacy review", m.Privacy}} {
		if kv[1] != "" {
			fmt.Fprintf(e.Stdout, "%s: %s\n", kv[0], kv[1])
		}
	}
	if m.Width > 0 {
		fmt.Fprintf(e.Stdout, "size: %dx%d\n", m.Width, m.Height)
	}
	if m.Redacted {
		fmt.Fprintln(e.Stdout, "secrets in it were redacted before it was stored")
	}
	if v.Text != "" && a.Kind != backend.ArtifactHTML {
		fmt.Fprintf(e.Stdout, "\n%s", v.Text)
		if v.Text[len(v.Text)-1] != '\n' {
			fmt.Fprintln(e.Stdout)
		}
	}
}

// writeNew writes data to a file that must not exist yet: an export never
// overwrites, and never follows a symlink planted at the name.
func writeNew(path string, data []byte) error {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_EXCL, 0o644)
	if errors.Is(err, os.ErrExist) {
		return backend.Errorf(backend.CodeConflict, "%s already exists; choose another file", filepath.Base(path))
	}
	if err != nil {
		return fmt.Errorf("export artifact: %w", err)
	}
	if _, err := f.Write(data); err != nil {
		f.Close()
		return fmt.Errorf("export artifact: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("export artifact: %w", err)
	}
	return nil
}
