package cli

import (
	"archive/zip"
	"bytes"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agenthub/app/api"
	"agenthub/backend"
	"agenthub/backend/store"
)

// plantedSecret has a GitHub token's format, which the redactor knows.
const plantedSecret = "ghp_Zq7RkT2mWx9LpV4nBc8YdF3sHj6GaE1uKo5N"

// TestRunsExportVerifySearch is the demo end to end: a run whose task names
// a secret and the machine's paths, and one event written past the store's
// redactor, is exported; no byte of any file in the bundle holds the secret
// or an absolute path of this machine; verify passes with no database, and
// fails once a byte changes; search finds the run's patch.
func TestRunsExportVerifySearch(t *testing.T) {
	env, dir := newGitWorkspace(t)
	home := env["AGENTHUB_HOME"]
	task := "tour " + dir + " and " + home + "/x with key " + plantedSecret
	code, out, errOut := runCLI(t, env, "run", "--workspace", dir, "--on-approval", "approve", "--json", task)
	if code != ExitOK {
		t.Fatalf("run: exit %d\n%s\n%s", code, out, errOut)
	}
	runID := decodeNDJSON(t, out, 0)[0].RunID

	// An event the redactor never saw (a row written before a rule existed).
	core, err := api.Open(t.Context(), api.Config{Home: home, Version: "test", Surface: backend.SurfaceCLI})
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(map[string]any{"text": "raw " + plantedSecret + " at " + dir + "/main.go"})
	_, err = core.Store().Do(t.Context(), func(tx *store.Tx) error {
		return tx.Exec(`INSERT INTO events (run_id, seq, id, type, session_id, agent_id, ts, schema_version, payload)
			SELECT id, last_seq + 1, 'evt_planted', 'run.message.completed', session_id, agent_id,
			'2026-11-25T07:00:00.000Z', 1, ? FROM runs WHERE id = ?`, string(raw), runID)
	})
	if err == nil {
		_, err = core.Store().Do(t.Context(), func(tx *store.Tx) error {
			return tx.Exec(`UPDATE runs SET last_seq = last_seq + 1 WHERE id = ?`, runID)
		})
	}
	if cerr := core.Close(); err != nil || cerr != nil {
		t.Fatal(err, cerr)
	}

	file := filepath.Join(t.TempDir(), "run.zip")
	code, out, errOut = runCLI(t, env, "runs", "export", runID, "-o", file)
	if code != ExitOK || !strings.Contains(out, "Exported run "+runID) {
		t.Fatalf("export: exit %d\n%s\n%s", code, out, errOut)
	}
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	files := unzip(t, data)
	for _, want := range []string{"manifest.json", "events.jsonl", "audit.jsonl", "audit-chain.jsonl", "transcript.md",
		"transcript.html"} {
		if _, ok := files[want]; !ok {
			t.Errorf("the bundle has no %s", want)
		}
	}
	if !hasPrefix(files, "patches/") {
		t.Error("the bundle has no patch diff (the demo proposes AGENTHUB_TOUR.md)")
	}
	if !bytes.Contains(files["events.jsonl"], []byte("evt_planted")) {
		t.Fatal("the planted event is not exported: the scan below would prove nothing")
	}
	real, _ := filepath.EvalSymlinks(dir)
	userHome, _ := os.UserHomeDir()
	needles := []string{plantedSecret, dir, real, home, t.TempDir()[:strings.LastIndex(t.TempDir(), "/")]}
	if userHome != "" && userHome != "/" {
		needles = append(needles, userHome)
	}
	files["(the zip itself)"] = data
	for name, b := range files {
		for _, n := range needles {
			if n != "" && bytes.Contains(b, []byte(n)) {
				t.Errorf("%s holds %q", name, n)
			}
		}
	}

	env2 := map[string]string{"AGENTHUB_HOME": filepath.Join(t.TempDir(), "never-created")}
	code, out, errOut = runCLI(t, env2, "runs", "verify", file)
	if code != ExitOK || !strings.Contains(out, "bundle OK") {
		t.Fatalf("verify: exit %d\n%s\n%s", code, out, errOut)
	}
	if _, err := os.Stat(env2["AGENTHUB_HOME"]); !os.IsNotExist(err) {
		t.Errorf("verify touched a data directory: %v", err)
	}
	tampered := filepath.Join(t.TempDir(), "tampered.zip")
	files2 := unzip(t, data)
	files2["events.jsonl"] = bytes.Replace(files2["events.jsonl"], []byte("tour"), []byte("tout"), 1)
	if err := os.WriteFile(tampered, rezipFiles(t, files2), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, _ = runCLI(t, env2, "runs", "verify", tampered)
	if code != ExitFailed || !strings.Contains(out, "BROKEN: events.jsonl does not match its manifest hash") {
		t.Fatalf("verify of a tampered bundle: exit %d\n%s", code, out)
	}

	// A teammate imports it: read-only, searchable, never resumed.
	env3 := map[string]string{"AGENTHUB_HOME": t.TempDir(), "PATH": os.Getenv("PATH"), "HOME": os.Getenv("HOME")}
	code, out, errOut = runCLI(t, env3, "runs", "import", tampered)
	if code == ExitOK || !strings.Contains(errOut, "invalid_input") || !strings.Contains(errOut, "does not verify") {
		t.Fatalf("import of a tampered bundle: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, errOut = runCLI(t, env3, "runs", "import", file)
	if code != ExitOK || !strings.Contains(out, "Imported run "+runID) {
		t.Fatalf("import: exit %d\n%s\n%s", code, out, errOut)
	}
	code, out, _ = runCLI(t, env3, "runs", "show", "--json", runID)
	var shown backend.RunSummary
	if err := json.Unmarshal([]byte(out), &shown); code != ExitOK || err != nil || shown.State != backend.RunCompleted ||
		shown.LastSequence == 0 {
		t.Fatalf("runs show of the imported run: exit %d %v\n%s", code, err, out)
	}
	code, out, _ = runCLI(t, env3, "runs", "events", "--json", runID)
	if code != ExitOK || strings.Count(out, "\n") != int(shown.LastSequence) {
		t.Fatalf("runs events of the imported run: exit %d, %d lines for %d events", code, strings.Count(out, "\n"),
			shown.LastSequence)
	}
	code, _, errOut = runCLI(t, env3, "runs", "resume", runID)
	if code == ExitOK || !strings.Contains(errOut, "run_imported") {
		t.Fatalf("resume of an imported run: exit %d\n%s", code, errOut)
	}
	code, _, errOut = runCLI(t, env3, "runs", "import", file)
	if code == ExitOK || !strings.Contains(errOut, "conflict") {
		t.Fatalf("a second import: exit %d\n%s", code, errOut)
	}
	code, out, _ = runCLI(t, env3, "search", "--json", "AGENTHUB_TOUR")
	if code != ExitOK || !strings.Contains(out, runID) {
		t.Fatalf("search in the importing data directory: exit %d\n%s", code, out)
	}

	code, out, errOut = runCLI(t, env, "search", "--json", "AGENTHUB_TOUR")
	var hits []api.SearchResult
	if err := json.Unmarshal([]byte(out), &hits); code != ExitOK || err != nil || len(hits) == 0 {
		t.Fatalf("search: exit %d %v\n%s\n%s", code, err, out, errOut)
	}
	for _, h := range hits {
		if h.RunID != runID {
			t.Errorf("search found run %s", h.RunID)
		}
	}
	code, out, _ = runCLI(t, env, "search", "--status", "Failed", "AGENTHUB_TOUR")
	if code != ExitOK || !strings.Contains(out, "No match.") {
		t.Errorf("search --status Failed: exit %d\n%s", code, out)
	}
	code, _, errOut = runCLI(t, env, "search", "--status", "Bogus", "x")
	if code == ExitOK || !strings.Contains(errOut, "invalid_input") {
		t.Errorf("search --status Bogus: exit %d\n%s", code, errOut)
	}
}

func unzip(t *testing.T, data []byte) map[string][]byte {
	t.Helper()
	z, err := zip.NewReader(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	out := map[string][]byte{}
	for _, f := range z.File {
		rc, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		b, err := io.ReadAll(rc)
		rc.Close()
		if err != nil {
			t.Fatal(err)
		}
		out[f.Name] = b
	}
	return out
}

func rezipFiles(t *testing.T, files map[string][]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	z := zip.NewWriter(&buf)
	for name, b := range files {
		w, err := z.Create(name)
		if err != nil {
			t.Fatal(err)
		}
		w.Write(b)
	}
	if err := z.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func hasPrefix(files map[string][]byte, prefix string) bool {
	for name := range files {
		if strings.HasPrefix(name, prefix) {
			return true
		}
	}
	return false
}
