package cli

import (
	"context"
	"fmt"
	"runtime"
)

func runVersion(_ context.Context, e *Env, args []string) error {
	fl, _ := flags(e, "version")
	if err := parse(fl, args); err != nil {
		return err
	}
	if fl.NArg() > 0 {
		return usagef("version takes no arguments")
	}
	fmt.Fprintf(e.Stdout, "agenthub %s (%s, %s/%s)\n", e.Version, runtime.Version(), runtime.GOOS, runtime.GOARCH)
	return nil
}
