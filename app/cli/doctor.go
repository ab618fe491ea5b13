package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"

	"agenthub/app/api"
	"agenthub/backend"
	"agenthub/backend/store"
)

// check is one line of `agenthub doctor`.
type check struct {
	name     string
	ok       bool
	detail   string
	fix      string
	optional bool // a failing optional check does not fail the command
}

func runDoctor(ctx context.Context, e *Env, args []string) error {
	fl, home := flags(e, "doctor")
	integrity := fl.Bool("integrity", false, "run SQLite's full integrity_check instead of quick_check (slower)")
	if err := parse(fl, args); err != nil {
		return err
	}
	if fl.NArg() > 0 {
		return usagef("doctor takes no arguments")
	}
	checks := []check{libraryCheck("GTK 3", "libgtk-3.so.0"), libraryCheck("WebKitGTK 4.1", "libwebkit2gtk-4.1.so.0"),
		displayCheck(e.Getenv), confinementCheck()}
	checks = append(checks, engineCheck(ctx, e, *home)) // doctor_engine.go
	checks = append(checks, dataChecks(ctx, e, *home, *integrity)...)
	checks = append(checks, toolChecks(ctx, e)...)
	checks = append(checks, modelServerChecks(ctx, e.Getenv)...)
	failed := 0
	for _, c := range checks {
		status := "pass"
		if !c.ok {
			status = "FAIL"
			if c.optional {
				status = "warn"
			} else {
				failed++
			}
		}
		fmt.Fprintf(e.Stdout, "[%s] %s: %s\n", status, c.name, c.detail)
		if !c.ok && c.fix != "" {
			fmt.Fprintf(e.Stdout, "       fix: %s\n", c.fix)
		}
	}
	if failed > 0 {
		fmt.Fprintf(e.Stdout, "\n%d check(s) failed.\n", failed)
		return codedExit{ExitFailed}
	}
	fmt.Fprintln(e.Stdout, "\nAll required checks passed.")
	return nil
}

var libDirs = []string{"/usr/lib/x86_64-linux-gnu", "/usr/lib/aarch64-linux-gnu", "/usr/lib64", "/usr/lib", "/lib/x86_64-linux-gnu", "/usr/local/lib"}

func libraryCheck(name, soname string) check {
	for _, dir := range libDirs {
		if _, err := os.Stat(filepath.Join(dir, soname)); err == nil {
			return check{name: name, ok: true, detail: soname + " found"}
		}
	}
	return check{name: name, detail: soname + " not found", fix: installHint()}
}

// installHint names the command that installs the window's libraries on this
// distribution.
func installHint() string {
	id := osRelease()
	switch {
	case strings.Contains(id, "debian"), strings.Contains(id, "ubuntu"):
		return "sudo apt-get install -y libgtk-3-0 libwebkit2gtk-4.1-0"
	case strings.Contains(id, "fedora"), strings.Contains(id, "rhel"):
		return "sudo dnf install -y gtk3 webkit2gtk4.1"
	case strings.Contains(id, "arch"):
		return "sudo pacman -S --needed gtk3 webkit2gtk-4.1"
	}
	return "install GTK 3 and WebKitGTK 4.1 with your package manager (or use `agenthub serve`)"
}

func osRelease() string {
	b, err := os.ReadFile("/etc/os-release")
	if err != nil {
		return ""
	}
	var ids []string
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "ID=") || strings.HasPrefix(line, "ID_LIKE=") {
			ids = append(ids, strings.Trim(strings.SplitN(line, "=", 2)[1], `"`))
		}
	}
	return strings.Join(ids, " ")
}

func displayCheck(getenv func(string) string) check {
	for _, v := range []string{"WAYLAND_DISPLAY", "DISPLAY"} {
		if d := getenv(v); d != "" {
			return check{name: "display", ok: true, detail: v + "=" + d}
		}
	}
	return check{name: "display", optional: true, detail: "no DISPLAY or WAYLAND_DISPLAY",
		fix: "start AgentHub from a desktop session, or use `agenthub serve` for browser mode"}
}

func dataChecks(ctx context.Context, e *Env, homeFlag string, integrity bool) []check {
	home, err := api.ResolveHome(homeFlag, e.Getenv)
	if err != nil {
		return []check{{name: "data directory", detail: err.Error(), fix: "pass --home DIR"}}
	}
	shown := api.DisplayPath(home)
	if err := api.EnsureHome(home); err != nil {
		return []check{{name: "data directory", detail: api.ErrorOf(err).Message,
			fix: "make it writable, or pass --home DIR / set AGENTHUB_HOME"}}
	}
	out := []check{{name: "data directory", ok: true, detail: shown + " is writable"}}
	// A reader: doctor never recovers or starts runs (issue 16).
	core, err := api.Open(ctx, api.Config{Home: home, Version: e.Version, Surface: "cli", Role: api.RoleReader})
	if err != nil {
		body := api.ErrorOf(err)
		return append(out, check{name: "SQLite", detail: body.Message + " (" + string(body.Code) + ")", fix: body.Next})
	}
	defer core.Close()
	st := core.Store()
	v, err := st.SQLiteVersion(ctx)
	if err != nil {
		return append(out, check{name: "SQLite", detail: err.Error(), fix: "check the database file"})
	}
	out = append(out, check{name: "SQLite", ok: true, detail: "version " + v + ", database opens and migrates"})
	out = append(out, worktreeChecks(core)...) // doctor_worktrees.go
	return append(out, storageChecks(ctx, st, integrity)...)
}

// storageChecks are the database's own: SQLite's quick_check (or
// integrity_check), and the audit chain against its key and anchor, which
// also tells a database that lost entries since the last start.
func storageChecks(ctx context.Context, st *store.Store, integrity bool) []check {
	name := "database integrity (quick_check)"
	if integrity {
		name = "database integrity (integrity_check)"
	}
	var out []check
	if err := st.Check(ctx, integrity); err != nil {
		body := api.ErrorOf(err)
		out = append(out, check{name: name, detail: body.Message + " " + causeOf(err) + " (" + string(body.Code) + ")",
			fix: body.Next})
	} else {
		out = append(out, check{name: name, ok: true, detail: "ok"})
	}
	r, err := st.CheckAudit(ctx, nil)
	switch {
	case err != nil:
		body := api.ErrorOf(err)
		out = append(out, check{name: "audit chain", detail: body.Message, fix: body.Next})
	case !r.OK:
		out = append(out, check{name: "audit chain", detail: fmt.Sprintf("broken at entry %d: %s", r.BrokenSeq,
			strings.Join(r.Problems, "; ")),
			fix: "restore the database from a backup you trust; `agenthub audit verify` lists every finding"})
	default:
		out = append(out, check{name: "audit chain", ok: true,
			detail: fmt.Sprintf("%d entries, keyed and matching its anchor", r.Entries)})
	}
	return out
}

// causeOf is the innermost cause of a coded error, for doctor's detail.
func causeOf(err error) string {
	var be *backend.Error
	if errors.As(err, &be) && be.Err != nil {
		return "(" + be.Err.Error() + ")"
	}
	return ""
}
