package cli

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agenthub/backend"
	"agenthub/backend/llm/llmtest"
	"agenthub/backend/runtime/acp/acptest"
	"agenthub/backend/runtime/codex/codextest"
)

// Issue 14 item 6, last part: the profile's key is never in the
// environment of a command the agent runs. Each test gives a CLI a key
// with no well-known format (a local gateway's token) under a variable
// whose name does not say secret and has the model run `env` (and read the
// environment of the CLI itself) through the CLI's own shell tool. The key
// must reach the model server as the key (the CLI works), but never what
// the commands print: not the model's requests, the events, or any byte of
// the data directory (SQLite, the CLI's raw output, its own transcripts).
// A key the model itself echoes is the redactor's to mask (backend/redact
// Register); the CLI's raw output keeps such text verbatim.

// profileKey puts a fresh key into AgentHub's environment under a variable
// of its own and returns the variable's name and the key.
func profileKey(t *testing.T) (name, key string) {
	t.Helper()
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		t.Fatal(err)
	}
	name = "AGENTHUB_TEST_GW_" + strings.ToUpper(hex.EncodeToString(b[:4]))
	key = "gw" + hex.EncodeToString(b[:])
	// Not t.Setenv: these tests run in parallel, each with its own name.
	if err := os.Setenv(name, key); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.Unsetenv(name) })
	return name, key
}

// envCommand prints the command's environment and the environment of its
// parent, the CLI.
const envCommand = "env; echo ---; tr '\\0' '\\n' < /proc/$PPID/environ"

// assertKeyNowhere fails when the key is in a model request's body, an
// event, or a file of the data directory; sawEnv says the test saw the
// command's output reach the model at all.
func assertKeyNowhere(t *testing.T, home, key string, bodies [][]byte, evs []backend.Event, envMarker string) {
	t.Helper()
	var sawEnv bool
	for i, b := range bodies {
		sawEnv = sawEnv || bytes.Contains(b, []byte(envMarker))
		if bytes.Contains(b, []byte(key)) {
			t.Errorf("model request %d holds the profile's key", i)
		}
	}
	if !sawEnv {
		t.Errorf("the output of env (%s) never reached the model: the test cannot see the environment", envMarker)
	}
	for _, ev := range evs {
		if bytes.Contains(ev.Payload, []byte(key)) {
			t.Errorf("event %s holds the profile's key: %s", ev.Type, clipForLog(string(ev.Payload)))
		}
	}
	err := filepath.WalkDir(home, func(p string, d fs.DirEntry, err error) error {
		if err != nil || !d.Type().IsRegular() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		if bytes.Contains(b, []byte(key)) {
			rel, _ := filepath.Rel(home, p)
			t.Errorf("%s in the data directory holds the profile's key", rel)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
}

func TestClaudeCommandsNeverSeeTheKey(t *testing.T) {
	t.Parallel()
	bin := claudeCLI.path(t)
	keyEnv, key := profileKey(t)
	env, dir := newGitWorkspace(t)
	srv := llmtest.NewAnthropic(
		llmtest.Turn{Calls: []llmtest.Call{ccCall("toolu_1", "Bash", map[string]any{"command": envCommand,
			"description": "show the environment"})}},
		llmtest.Turn{Text: []string{"Done."}},
	)
	t.Cleanup(srv.Close)
	putProfile(t, env, "cc", fmt.Sprintf("name = \"cc\"\nruntime = \"claude\"\nbase_url = %q\nmodel = \"claude-test\"\n"+
		"command = %q\nkey_env = %q\nrun_timeout = \"2m\"\n[stop]\nmax_rounds = 10\n", srv.URL, bin, keyEnv))
	evs := runTask(t, env, dir, "cc", "approve")
	if !hasType(evs, backend.EvRunCompleted) {
		t.Fatalf("the run did not complete: %s", evs[len(evs)-1].Type)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 {
		t.Fatalf("%d model requests, want 2", len(reqs))
	}
	var bodies [][]byte
	for _, r := range reqs {
		if got := r.Header.Get("X-Api-Key"); got != key {
			t.Fatalf("the model server got the key %q, want the profile's", got)
		}
		bodies = append(bodies, r.Raw)
	}
	assertKeyNowhere(t, env["AGENTHUB_HOME"], key, bodies, evs, "CLAUDE_CONFIG_DIR=")
}

func TestGeminiCommandsNeverSeeTheKey(t *testing.T) {
	t.Parallel()
	bin := geminiCLI.path(t)
	keyEnv, key := profileKey(t)
	env, dir := newGitWorkspace(t)
	srv := acptest.NewGemini(
		acptest.Turn{Calls: []acptest.Call{{Name: "run_shell_command", Args: map[string]any{"command": envCommand}}}},
		acptest.Turn{Text: []string{"Done."}})
	t.Cleanup(srv.Close)
	writeACPProfile(t, env, geminiProfile(bin, srv.URL)+fmt.Sprintf("\nkey_env = %q", keyEnv))
	evs := runTask(t, env, dir, "gm", "approve")
	if !hasType(evs, backend.EvRunCompleted) {
		t.Fatalf("the run did not complete: %s", evs[len(evs)-1].Type)
	}
	var bodies [][]byte
	for _, r := range srv.Requests() {
		if got := r.Header.Get("X-Goog-Api-Key"); got != key {
			t.Fatalf("the model server got the key %q, want the profile's", got)
		}
		bodies = append(bodies, r.Raw)
	}
	assertKeyNowhere(t, env["AGENTHUB_HOME"], key, bodies, evs, "GEMINI_CLI_NO_RELAUNCH=")
}

func TestCodexCommandsNeverSeeTheKey(t *testing.T) {
	t.Parallel()
	bin := codexCLI.path(t)
	keyEnv, key := profileKey(t)
	env, dir := newGitWorkspace(t)
	srv := codextest.New(
		codextest.Turn{Calls: []codextest.Call{codextest.Exec("call_e1", "env", false)}},
		codextest.Turn{Text: []string{"Done."}})
	t.Cleanup(srv.Close)
	writeCodexProfile(t, env, bin, srv.URL, fmt.Sprintf("key_env = %q", keyEnv))
	evs := runTask(t, env, dir, "cx", "approve")
	if !hasType(evs, backend.EvRunCompleted) {
		t.Fatalf("the run did not complete: %s", evs[len(evs)-1].Type)
	}
	var bodies [][]byte
	for _, r := range srv.ModelRequests() {
		if got := r.Header.Get("Authorization"); got != "Bearer "+key {
			t.Fatalf("the model server got %q, want the profile's key", got)
		}
		bodies = append(bodies, r.Raw)
	}
	assertKeyNowhere(t, env["AGENTHUB_HOME"], key, bodies, evs, "PATH=")
}
