// Command agenthub is AgentHub Desktop: the window, browser mode and the
// headless CLI. main only wires the embedded frontend and the window entry
// point into app/cli, which parses the subcommand.
package main

import (
	"embed"
	"io/fs"
	"os"

	"agenthub/app"
	"agenthub/app/api"
	"agenthub/app/cli"
)

//go:embed all:frontend/dist
var assets embed.FS

//go:embed build/appicon.png
var icon []byte

// version is set at build time with -ldflags "-X main.version=…".
var version = "0.1.0-dev"

func main() {
	dist, err := fs.Sub(assets, "frontend/dist")
	if err != nil {
		panic(err) // the embed pattern guarantees the directory exists
	}
	os.Exit(cli.Main(cli.Env{
		Args:    os.Args[1:],
		Stdin:   os.Stdin,
		Stdout:  os.Stdout,
		Stderr:  os.Stderr,
		Assets:  dist,
		Version: version,
		Window: func(core *api.Core, dist fs.FS) error {
			return app.Run(core, dist, icon)
		},
	}))
}
