package hostile

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"agenthub/backend"
	"agenthub/backend/llm/llmtest"
	"agenthub/backend/runtime/acp/acptest"
)

// pinnedCLI finds a pinned agent CLI the way the CLI package's end-to-end
// tests do: the Makefile's variable, else .cache/agent-clis. Under CI a
// missing CLI fails; elsewhere its cases are skipped (and left out of the
// counts).
func pinnedCLI(t *testing.T, l *ledger, envVar, dir, bin, prefix string) (string, bool) {
	path := os.Getenv(envVar)
	if path == "" {
		if root, err := filepath.Abs("../.."); err == nil {
			path = filepath.Join(root, ".cache", "agent-clis", dir, "node_modules", ".bin", bin)
		}
	}
	if _, err := os.Stat(path); err != nil {
		msg := fmt.Sprintf("the pinned %s CLI is not installed (%s); install it with `scripts/deps.sh test`", bin, envVar)
		if os.Getenv("CI") != "" {
			t.Fatal(msg)
		}
		l.skip(prefix)
		t.Log(msg)
		return "", false
	}
	return path, true
}

// playRealCLIs runs a few cases through each real agent CLI against a
// scripted model server on loopback; they are slow, so there are few.
func playRealCLIs(t *testing.T, l *ledger) {
	t.Run("claude", func(t *testing.T) {
		bin, ok := pinnedCLI(t, l, "AGENTHUB_CLAUDE_BIN", "", "claude", "cli/claude/")
		if ok {
			playClaude(t, l, bin)
		}
	})
	t.Run("gemini", func(t *testing.T) {
		bin, ok := pinnedCLI(t, l, "AGENTHUB_GEMINI_BIN", "gemini", "gemini", "cli/gemini/")
		if ok {
			playGemini(t, l, bin)
		}
	})
}

func ccCall(id, name string, input map[string]any) llmtest.Call {
	b, _ := json.Marshal(input)
	return llmtest.Call{ID: id, Name: name, Args: []string{string(b)}}
}

// playClaude: a symlink out of the workspace that Claude Code reads itself
// (issue 14 item 7), and the profile's key in the environment of the
// commands Claude Code runs (item 6, last point).
func playClaude(t *testing.T, l *ledger, bin string) {
	t.Run("read-symlink-out", func(t *testing.T) {
		w := newWorld(t)
		must(t, os.Symlink("../outside/canary.txt", filepath.Join(w.ws, "notes-link.txt")))
		srv := llmtest.NewAnthropic(
			llmtest.Turn{Text: []string{"Reading the notes."}, Calls: []llmtest.Call{ccCall("toolu_1", "Read",
				map[string]any{"file_path": w.ws + "/notes-link.txt"})}},
			llmtest.Turn{Text: []string{"Done."}},
		)
		t.Cleanup(srv.Close)
		w.putProfile("cc", fmt.Sprintf("name = \"cc\"\nruntime = \"claude\"\nbase_url = %q\nmodel = \"claude-test\"\n"+
			"command = %q\nrun_timeout = \"2m\"\n[stop]\nmax_rounds = 6\n", srv.URL, bin))
		res := w.run("cc", "approve", 3*time.Minute, nil)
		where := secretLeaks(w.dataFiles(), res.stdout, "", w.canary)
		if n := len(srv.Requests()); n < 2 && !res.hung {
			t.Fatalf("Claude Code made %d model requests, want 2: the read was not played (exit %d): %s", n, res.code, lastLine(res.stderr))
		}
		for i, r := range srv.Requests() {
			if strings.Contains(string(r.Raw), w.canary) {
				where = append(where, fmt.Sprintf("model request %d", i+1))
			}
		}
		l.check(t, "cli/claude/read-symlink-out", !res.hung && len(where) == 0,
			"the outside file's text reached: %s (hung %v, ended %q)", strings.Join(where, ", "), res.hung, terminal(res.events))
	})
	t.Run("profile-key-in-bash-env", func(t *testing.T) {
		w := newWorld(t)
		key := "gw-" + entropy("claude-gateway", hexLow, 40)
		w.env["HOSTILE_CLAUDE_KEY"] = key
		srv := llmtest.NewAnthropic(
			llmtest.Turn{Calls: []llmtest.Call{ccCall("toolu_1", "Bash", map[string]any{"command": "env", "description": "show env"})}},
			llmtest.Turn{Text: []string{"Done."}},
		)
		t.Cleanup(srv.Close)
		w.putProfile("cc", fmt.Sprintf("name = \"cc\"\nruntime = \"claude\"\nbase_url = %q\nmodel = \"claude-test\"\n"+
			"key_env = \"HOSTILE_CLAUDE_KEY\"\ncommand = %q\nrun_timeout = \"2m\"\n[stop]\nmax_rounds = 6\n", srv.URL, bin))
		res := w.run("cc", "approve", 3*time.Minute, nil)
		where := secretLeaks(w.dataFiles(), res.stdout, "", key)
		reqs := srv.Requests()
		if len(reqs) < 2 {
			t.Fatalf("Claude Code made %d model requests, want 2: the case did not play (exit %d, %s): %s", len(reqs), res.code, failure(res.events), lastLine(res.stderr))
		}
		for i, r := range reqs {
			if i > 0 && strings.Contains(string(r.Raw), key) {
				where = append(where, fmt.Sprintf("model request %d (the command's output)", i+1))
			}
		}
		l.check(t, "cli/claude/profile-key-in-bash-env", !res.hung && len(where) == 0,
			"the profile's key reached: %s (%d model requests, hung %v, ended %q)", strings.Join(where, ", "), len(reqs), res.hung, terminal(res.events))
	})
}

// playGemini: the same symlink, read by Gemini CLI's own read_file.
func playGemini(t *testing.T, l *ledger, bin string) {
	t.Run("read-symlink-out", func(t *testing.T) {
		w := newWorld(t)
		must(t, os.Symlink("../outside/canary.txt", filepath.Join(w.ws, "notes-link.txt")))
		srv := acptest.NewGemini(
			acptest.Turn{Text: []string{"Reading the notes."}, Calls: []acptest.Call{{Name: "read_file",
				Args: map[string]any{"file_path": w.ws + "/notes-link.txt"}}}},
			acptest.Turn{Text: []string{"Done."}},
		)
		t.Cleanup(srv.Close)
		w.putProfile("gm", fmt.Sprintf("name = \"gm\"\nruntime = \"gemini\"\ncommand = [%q, \"--acp\"]\nbase_url = %q\n"+
			"run_timeout = \"2m\"\n[stop]\nmax_rounds = 6\n", bin, srv.URL))
		res := w.run("gm", "approve", 3*time.Minute, nil)
		where := secretLeaks(w.dataFiles(), res.stdout, "", w.canary)
		if n := len(srv.Requests()); n < 2 && !res.hung {
			t.Fatalf("Gemini CLI made %d model requests, want 2: the read was not played (exit %d): %s", n, res.code, lastLine(res.stderr))
		}
		for i, r := range srv.Requests() {
			if strings.Contains(string(r.Raw), w.canary) {
				where = append(where, fmt.Sprintf("model request %d", i+1))
			}
		}
		l.check(t, "cli/gemini/read-symlink-out", !res.hung && len(where) == 0,
			"the outside file's text reached: %s (hung %v, ended %q)", strings.Join(where, ", "), res.hung, terminal(res.events))
	})
}

// failure is the payload of a run.failed event, or "".
func failure(evs []backend.Event) string {
	for _, ev := range evs {
		if ev.Type == backend.EvRunFailed {
			return string(ev.Payload)
		}
	}
	return ""
}
