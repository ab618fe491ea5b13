package agui

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"agenthub/tests/protocols/protocoltest"
)

// summary is what drive.mjs saw (its last line of stdout).
type summary struct {
	AGUI struct {
		RunID        string
		StaleRefused string
		Drop         struct{ CutAt, Reattached int }
		Cancel       struct{ Last, Outcome, Code, State string }
	} `json:"agui"`
	AISDK struct {
		RunID        string
		StaleRefused string
		Full         struct{ Texts []string }
		Cancel       struct{ RunID, Last string }
	} `json:"aisdk"`
	Warnings []string
	Failure  string
}

// TestOfficialClientsDriveAgentHub builds agenthub, starts `agenthub serve`
// on a temporary data directory with an allowlisted temporary git
// repository and a playbook (a write of two hunks, then a command), and
// lets drive.mjs drive it with the official AG-UI client and the AI SDK:
// approvals, a stale hash, a partial approval, a rejection, a stream cut
// and resumed, and a cancel, each client validating every event. Then the
// files and the audit trail say what really happened.
func TestOfficialClientsDriveAgentHub(t *testing.T) {
	here, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	node := protocoltest.RequireNode(t, here, "@ag-ui/client", "@ag-ui/core", "ai", "rxjs")
	bin := os.Getenv("AGENTHUB_BIN")
	if bin == "" {
		bin = filepath.Join(t.TempDir(), "agenthub")
		build := exec.Command("go", "build", "-tags", "sqlite_fts5", "-o", bin, ".")
		build.Dir = filepath.Join(here, "..", "..", "..")
		if out, err := build.CombinedOutput(); err != nil {
			t.Fatalf("build agenthub: %v\n%s", err, out)
		}
	}

	home, ws := t.TempDir(), protocoltest.GitWorkspace(t, "notes.txt", 40)
	playbook, err := os.ReadFile(filepath.Join(here, "testdata", "edit.toml"))
	if err != nil {
		t.Fatal(err)
	}
	// A playbook kept in the data directory is a profile from the engine's
	// start on (docs/PLAYBOOK.md), named after its hash.
	sum := sha256.Sum256(playbook)
	profile := "playbook:" + hex.EncodeToString(sum[:8])
	if err := os.MkdirAll(filepath.Join(home, "playbooks"), 0o700); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(home, "playbooks", strings.TrimPrefix(profile, "playbook:")+".toml"), playbook, 0o600); err != nil {
		t.Fatal(err)
	}
	env := append(protocoltest.WithoutAgentHubVars(os.Environ()), "AGENTHUB_HOME="+home, "AGENTHUB_ENGINE_START_TIMEOUT=120s",
		"AGENTHUB_LOCAL_SERVERS=none")
	base, token := startServe(t, bin, env)
	t.Cleanup(func() {
		cmd := exec.Command(bin, "engine", "stop")
		cmd.Env = env
		_ = cmd.Run()
	})
	var wsv struct{ ID string }
	if status, body := call(t, base, token, "POST", "/api/workspaces", fmt.Sprintf(`{"path":%q}`, ws)); status != 200 ||
		json.Unmarshal(body, &wsv) != nil || wsv.ID == "" {
		t.Fatalf("add workspace: %d %s", status, body)
	}

	t.Run("token and origin", func(t *testing.T) {
		for _, path := range []string{"/agui", "/aisdk/chat"} {
			if status, _ := call(t, base, "", "POST", path, `{}`); status != http.StatusUnauthorized {
				t.Errorf("%s without the token: %d, want 401", path, status)
			}
			req, _ := http.NewRequest("POST", base+path, strings.NewReader(`{}`))
			req.Header.Set("Authorization", "Bearer "+token)
			req.Header.Set("Origin", "http://evil.example")
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			res.Body.Close()
			if res.StatusCode != http.StatusForbidden {
				t.Errorf("%s from another origin: %d, want 403", path, res.StatusCode)
			}
		}
	})

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	drive := exec.CommandContext(ctx, node, "drive.mjs")
	drive.Dir = here
	drive.Env = append(env, "AGENTHUB_URL="+base, "AGENTHUB_TOKEN="+token, "WORKSPACE_ID="+wsv.ID,
		"WORKSPACE_DIR="+ws, "PROFILE="+profile)
	var stderr bytes.Buffer
	drive.Stderr = &stderr
	out, err := drive.Output()
	var s summary
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if jerr := json.Unmarshal([]byte(lines[len(lines)-1]), &s); err != nil || jerr != nil {
		t.Fatalf("drive.mjs: %v %v\nstdout:\n%s\nstderr:\n%s", err, jerr, out, stderr.String())
	}
	if len(s.Warnings) > 0 {
		t.Errorf("the clients warned: %q", s.Warnings)
	}
	if s.AGUI.StaleRefused == "" || s.AISDK.StaleRefused == "" {
		t.Errorf("a stale hash was not refused: %+v", s)
	}
	if s.AGUI.Cancel.State == "" || s.AGUI.Cancel.State == "Completed" {
		t.Errorf("the AG-UI cancel left the run %q", s.AGUI.Cancel.State)
	}

	t.Run("audit", func(t *testing.T) {
		// Every decision the clients made is in the audit trail, with the
		// hunks chosen; the refused stale answers left nothing.
		_, body := call(t, base, token, "GET", "/api/audit", "")
		var entries []struct {
			Kind, RunID string
			Data        json.RawMessage
		}
		if err := json.Unmarshal(body, &entries); err != nil {
			t.Fatalf("audit: %v %s", err, body)
		}
		got := map[string][]string{}
		for _, e := range entries {
			if e.Kind != "approval.resolved" {
				continue
			}
			var d struct {
				Decision string
				Hunks    []struct{ Index int }
			}
			if err := json.Unmarshal(e.Data, &d); err != nil {
				t.Fatal(err)
			}
			v := d.Decision
			for _, h := range d.Hunks {
				v += "#" + strconv.Itoa(h.Index)
			}
			got[e.RunID] = append(got[e.RunID], v)
		}
		want := map[string][]string{
			s.AGUI.RunID:  {"approve_once#1", "reject_and_tell"},
			s.AISDK.RunID: {"approve_once#0", "reject_and_tell"},
		}
		for run, w := range want {
			if fmt.Sprint(got[run]) != fmt.Sprint(w) {
				t.Errorf("audit of %s: %v, want %v", run, got[run], w)
			}
		}
	})
	t.Run("workspace", func(t *testing.T) {
		// The AI SDK run applied only hunk 0 after the file was reset.
		data, err := os.ReadFile(filepath.Join(ws, "notes.txt"))
		if err != nil {
			t.Fatal(err)
		}
		lines := strings.Split(string(data), "\n")
		if lines[0] != "line 1 changed" || lines[39] != "line 40" {
			t.Errorf("notes.txt: %q … %q", lines[0], lines[39])
		}
	})
}

var urlLine = regexp.MustCompile(`(http://127\.0\.0\.1:\d+)/\?token=([0-9a-f]+)`)

// startServe starts `agenthub serve` and returns its base URL and token.
func startServe(t *testing.T, bin string, env []string) (string, string) {
	t.Helper()
	cmd := exec.Command(bin, "serve", "--addr", "127.0.0.1:0")
	cmd.Env = env
	stdout, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		_ = cmd.Process.Signal(os.Interrupt)
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(30 * time.Second):
			_ = cmd.Process.Kill()
		}
	})
	found := make(chan []string, 1)
	go func() {
		sc := bufio.NewScanner(stdout)
		for sc.Scan() {
			if m := urlLine.FindStringSubmatch(sc.Text()); m != nil {
				found <- m
				break
			}
		}
		_, _ = io.Copy(io.Discard, stdout)
	}()
	select {
	case m := <-found:
		return m[1], m[2]
	case <-time.After(2 * time.Minute):
		t.Fatalf("agenthub serve printed no URL within 2 minutes\nstderr:\n%s", stderr.String())
	}
	return "", ""
}

// call makes one request to the server with the token ("" = none).
func call(t *testing.T, base, token, method, path, body string) (int, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	req.Header.Set("Content-Type", "application/json")
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	if err != nil {
		t.Fatal(err)
	}
	return res.StatusCode, data
}
