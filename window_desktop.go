//go:build desktop

package main

import (
	_ "embed"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"

	"agenthub/app"
	"agenthub/app/api"
	"agenthub/backend/proc"
)

//go:embed build/appicon.png
var icon []byte

// window runs the desktop window in this process: this is agenthub-window.
func window(core *api.Core, dist fs.FS) error {
	return app.Run(core, dist, icon)
}

// prepare makes the CLI binary beside this one the supervisor of every
// command the window's engine starts: re-executing this binary would load
// GTK and WebKitGTK's ~170 shared libraries in each supervisor. Without it
// (a window binary copied alone) this binary supervises, as before.
func prepare() {
	exe, err := os.Executable()
	if err != nil {
		slog.Debug("no executable path; the window binary supervises its commands", "err", err)
		return
	}
	small := filepath.Join(filepath.Dir(exe), cliName)
	if err := proc.UseSupervisorProgram(small); err != nil {
		slog.Debug("no CLI binary beside the window; the window binary supervises its commands", "err", err)
	}
}

// cliName is the CLI binary the window binary expects beside it.
const cliName = "agenthub"
