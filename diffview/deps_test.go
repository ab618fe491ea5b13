package diffview

import (
	"os/exec"
	"strings"
	"testing"
)

// TestDependencies enforces the layout rule: diffview is a leaf that may
// import only the standard library and go-diff (transitively), so the
// frontend model never drags the rest of the module in.
func TestDependencies(t *testing.T) {
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", ".").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	allowed := map[string]string{
		"agenthub/diffview":                       "the package itself",
		"github.com/sergi/go-diff/diffmatchpatch": "the line and token aligner",
	}
	for _, dep := range strings.Fields(string(out)) {
		if _, ok := allowed[dep]; !ok {
			t.Errorf("diffview depends on %s; only the standard library and go-diff are allowed", dep)
		}
	}
}
