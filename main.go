// Command agenthub is AgentHub Desktop: the window, browser mode and the
// headless CLI. main only wires the embedded frontend and the window entry
// point into app/cli, which parses the subcommand.
//
// The same package builds two binaries (see the Makefile): `agenthub`,
// without the desktop tags, is the CLI, the engine and browser mode and
// never loads GTK or WebKitGTK; `agenthub-window`, with them, is the
// desktop window. `agenthub` (or `agenthub window`) replaces itself with the
// window binary found beside it (window_cli.go, window_desktop.go).
package main

import (
	"embed"
	"io/fs"
	"os"

	"agenthub/app/cli"
)

//go:embed all:frontend/dist
var assets embed.FS

// version is set at build time with -ldflags "-X main.version=…".
var version = "0.1.0-dev"

func main() {
	dist, err := fs.Sub(assets, "frontend/dist")
	if err != nil {
		panic(err) // the embed pattern guarantees the directory exists
	}
	prepare()
	os.Exit(cli.Main(cli.Env{
		Args:    os.Args[1:],
		Stdin:   os.Stdin,
		Stdout:  os.Stdout,
		Stderr:  os.Stderr,
		Assets:  dist,
		Version: version,
		Window:  window,
	}))
}
