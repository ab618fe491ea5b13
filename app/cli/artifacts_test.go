package cli

import (
	"archive/zip"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agenthub/backend"
)

// TestTourPublishesItsSummary: the demo tour's approved summary document
// becomes an artifact of the run, which artifacts list, show and export
// read back; export never overwrites.
func TestTourPublishesItsSummary(t *testing.T) {
	env, dir := newGitWorkspace(t)
	if code, out, errOut := runCLI(t, env, "run", "--workspace", dir, "--on-approval", "approve", "tour"); code != 0 {
		t.Fatalf("run: %d\n%s%s", code, out, errOut)
	}
	code, out, errOut := runCLI(t, env, "artifacts", "list", "--json")
	var list []backend.Artifact
	if code != 0 || json.Unmarshal([]byte(out), &list) != nil || len(list) != 1 {
		t.Fatalf("list: %d %s %s", code, out, errOut)
	}
	a := list[0]
	if a.Kind != backend.ArtifactDocument || a.Path != "AGENTHUB_TOUR.md" || a.Producer != "write_file" || a.Sequence == 0 {
		t.Errorf("the tour's artifact: %+v", a)
	}
	if code, out, _ := runCLI(t, env, "artifacts", "list", "--run", a.RunID); code != 0 || !strings.Contains(out, a.ID) {
		t.Errorf("list --run: %d %s", code, out)
	}
	if code, out, _ := runCLI(t, env, "artifacts", "list", "--run", "run_other"); code != 0 || !strings.Contains(out, "No artifacts.") {
		t.Errorf("list --run other: %d %s", code, out)
	}
	if code, out, _ := runCLI(t, env, "artifacts", "show", a.ID); code != 0 || !strings.Contains(out, "# Workspace tour") ||
		!strings.Contains(out, "source: AGENTHUB_TOUR.md") || strings.Contains(out, dir) {
		t.Errorf("show: %d %s", code, out)
	}
	dest := filepath.Join(t.TempDir(), "tour.md")
	if code, out, errOut := runCLI(t, env, "artifacts", "export", a.ID, "-o", dest); code != 0 {
		t.Fatalf("export: %d %s %s", code, out, errOut)
	}
	got, err := os.ReadFile(dest)
	want, err2 := os.ReadFile(filepath.Join(dir, "AGENTHUB_TOUR.md"))
	if err != nil || err2 != nil || string(got) != string(want) {
		t.Errorf("exported %q (%v), the workspace has %q (%v)", got, err, want, err2)
	}
	if code, _, errOut := runCLI(t, env, "artifacts", "export", a.ID, "-o", dest); code == 0 || !strings.Contains(errOut, "already exists") {
		t.Errorf("export over an existing file: %d %s", code, errOut)
	}
	if code, _, errOut := runCLI(t, env, "artifacts", "show", "nope"); code == 0 || !strings.Contains(errOut, "not an artifact id") {
		t.Errorf("show nope: %d %s", code, errOut)
	}
	if code, _, _ := runCLI(t, env, "artifacts"); code != ExitUsage {
		t.Errorf("artifacts without a subcommand: %d", code)
	}
}

// TestBundleCarriesArtifacts: a run's bundle holds its artifacts under
// artifacts/ as stored, named in the manifest with their hashes, and still
// verifies.
func TestBundleCarriesArtifacts(t *testing.T) {
	env, dir := newGitWorkspace(t)
	if code, out, errOut := runCLI(t, env, "run", "--workspace", dir, "--on-approval", "approve", "tour"); code != 0 {
		t.Fatalf("run: %d\n%s%s", code, out, errOut)
	}
	_, out, _ := runCLI(t, env, "artifacts", "list", "--json")
	var list []backend.Artifact
	if json.Unmarshal([]byte(out), &list) != nil || len(list) != 1 {
		t.Fatalf("list: %s", out)
	}
	a := list[0]
	zipPath := filepath.Join(t.TempDir(), "run.zip")
	if code, out, errOut := runCLI(t, env, "runs", "export", a.RunID, "-o", zipPath); code != 0 {
		t.Fatalf("export: %d %s %s", code, out, errOut)
	}
	zr, err := zip.OpenReader(zipPath)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	name := "artifacts/" + a.ID + "-AGENTHUB_TOUR.md"
	var found bool
	for _, f := range zr.File {
		if f.Name != name {
			continue
		}
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, _ := io.ReadAll(rc)
		rc.Close()
		want, _ := os.ReadFile(filepath.Join(dir, "AGENTHUB_TOUR.md"))
		found = string(b) == string(want)
	}
	if !found {
		t.Errorf("%s is not in the bundle with the stored content", name)
	}
	if code, out, errOut := runCLI(t, env, "runs", "verify", zipPath); code != 0 {
		t.Errorf("verify: %d %s %s", code, out, errOut)
	}
}
