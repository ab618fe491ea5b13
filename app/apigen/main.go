// Command apigen writes the frontend's API vocabulary,
// frontend/src/lib/api/generated.ts, from the Go packages that define it:
// event types, run states and their coarse status and transitions, failure
// codes, action kinds, decisions, verdicts, the typed event payloads and
// the default gate table. The backend is the single source; the frontend
// imports the generated file instead of keeping hand-made copies in step.
//
// Run it with `go generate ./app/apigen`; the package's
// test fails while the committed file differs from what this writes.
package main

//go:generate go run . -o ../../frontend/src/lib/api/generated.ts

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	out := flag.String("o", "", "the file to write (default: standard output)")
	flag.Parse()
	src, err := render("../../backend")
	if err != nil {
		fmt.Fprintln(os.Stderr, "apigen:", err)
		os.Exit(1)
	}
	if *out == "" {
		_, err = os.Stdout.Write(src)
	} else {
		err = os.WriteFile(*out, src, 0o644)
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "apigen:", err)
		os.Exit(1)
	}
}
