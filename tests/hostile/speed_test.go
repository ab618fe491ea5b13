package hostile

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"agenthub/backend/proc"
)

// runSuite builds the small supervisor program (./supervisor) once and makes
// it every command's supervisor, then runs the tests. Where it cannot be
// built (no go command), the test binary stays the supervisor, as in the
// product's CLI binary: slower, not different.
func runSuite(m *testing.M) int {
	if os.Getenv("HOSTILE_SELF_SUPERVISOR") == "1" { // to measure the difference
		return m.Run()
	}
	dir, err := os.MkdirTemp("", "hostile-supervisor-")
	if err != nil {
		fmt.Fprintln(os.Stderr, "hostile: temp dir for the supervisor:", err)
		return m.Run()
	}
	defer os.RemoveAll(dir)
	bin := filepath.Join(dir, "supervisor")
	start := time.Now()
	cmd := exec.Command("go", "build", "-o", bin, "agenthub/tests/hostile/supervisor")
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "hostile: the supervisor program was not built (%v): %s; the test binary supervises\n", err, out)
		return m.Run()
	}
	if err := proc.UseSupervisorProgram(bin); err != nil {
		fmt.Fprintln(os.Stderr, "hostile: the supervisor program:", err)
		return m.Run()
	}
	fmt.Fprintf(os.Stderr, "hostile: supervisor program built in %s\n", time.Since(start).Round(time.Millisecond))
	return m.Run()
}
