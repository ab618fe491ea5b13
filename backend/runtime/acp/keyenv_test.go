package acp

import (
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"agenthub/backend"
	"agenthub/backend/runtime/acp/acptest"
)

func init() { acptest.MaybeServeAgent() }

// TestGenericAgentNeverGetsTheKey: a generic ACP agent (runtime = "acp",
// here the scripted agent, a real process) whose profile has a key dumps
// its /proc/self/environ and the environment its commands inherit.
// With a declared model protocol the key is in neither (the agent gets the
// key proxy's address and a token, and the proxy sends the real key
// upstream); without one the run is refused before the agent starts,
// with a stable code and the next step.
func TestGenericAgentNeverGetsTheKey(t *testing.T) {
	const key = "gw-0d6b1f0c9a2e47d3b5c8e1f2a3b4c5d6" // a local gateway's token: no known format
	var mu sync.Mutex
	var upstreamAuth []string
	upstream := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		upstreamAuth = append(upstreamAuth, r.Header.Get("Authorization")+r.Header.Get("X-Api-Key"))
		mu.Unlock()
		_, _ = w.Write([]byte(`{}`))
	}))
	defer upstream.Close()
	bin, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		protocol       string
		urlVar, keyVar string
	}{
		{ProtocolOpenAI, "OPENAI_BASE_URL", "OPENAI_API_KEY"},
		{ProtocolAnthropic, "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY"},
		{"", "", ""},
	} {
		t.Run("protocol="+tc.protocol, func(t *testing.T) {
			root := t.TempDir()
			cmd, err := acptest.WriteScript(t.TempDir(), bin, acptest.Script{Steps: []acptest.Step{
				{Dump: "env-dump.txt"}, {Say: "done"}}})
			if err != nil {
				t.Fatal(err)
			}
			cfg := Config{Command: cmd, KeyEnv: "MY_GATEWAY_KEY", APIKey: key, ModelProtocol: tc.protocol,
				BaseURL: upstream.URL + "/v1", Dir: filepath.Join(t.TempDir(), "rt"),
				CheckpointDir: filepath.Join(t.TempDir(), "ck"),
				Getenv: func(name string) string {
					if name == "MY_GATEWAY_KEY" {
						return key
					}
					return os.Getenv(name)
				}}
			b, err := cfg.resolve(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			s := newSession(cfg, b, "task")
			live.Add(s.ID, s.startCallID(), s)
			defer func() { _ = s.stop(2 * time.Second) }()
			err = s.start(backend.ToolEnv{WorkspaceRoot: root, RunID: "run_key"})
			if tc.protocol == "" {
				var be *backend.Error
				if !errors.As(err, &be) || be.Code != backend.FailPermissionDenied || be.Detail != "model_protocol_required" ||
					!strings.Contains(be.Next, `model_protocol = "openai"`) {
					t.Fatalf("a key with no protocol: %v", err)
				}
				if s.P != nil {
					t.Fatal("the agent was started")
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			dump := waitDump(t, filepath.Join(root, "env-dump.txt"))
			if strings.Contains(dump, key) {
				t.Fatalf("the key is in the agent's environment:\n%s", dump)
			}
			for _, name := range []string{tc.urlVar, tc.keyVar, "MY_GATEWAY_KEY"} {
				if n := strings.Count(dump, "\n"+name+"="+envValue(s, name)); n != 2 {
					t.Errorf("%s is in /proc/self/environ and env %d times, want 2:\n%s", name, n, dump)
				}
			}
			// The token opens the proxy, which sends the real key upstream.
			req, _ := http.NewRequest(http.MethodPost, s.Keys.URL()+"/responses", strings.NewReader("{}"))
			if tc.protocol == ProtocolOpenAI {
				req.Header.Set("Authorization", "Bearer "+s.Keys.Token())
			} else {
				req.Header.Set("X-Api-Key", s.Keys.Token())
			}
			res, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			_ = res.Body.Close()
			mu.Lock()
			got := strings.Join(upstreamAuth, ",")
			upstreamAuth = nil
			mu.Unlock()
			if res.StatusCode != 200 || !strings.Contains(got, key) {
				t.Errorf("through the proxy: %d, upstream saw %q", res.StatusCode, got)
			}
		})
	}
}

// envValue is what the session put in the agent's environment for name.
func envValue(s *session, name string) string {
	if strings.HasSuffix(name, "_BASE_URL") {
		return s.Keys.URL()
	}
	return s.Keys.Token()
}

func waitDump(t *testing.T, path string) string {
	t.Helper()
	for deadline := time.Now().Add(60 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		b, err := os.ReadFile(path)
		if err == nil && strings.Contains(string(b), "\n--- env\n") && strings.HasSuffix(string(b), "\n") {
			return "\n" + string(b)
		}
		if time.Now().After(deadline) {
			t.Fatalf("the agent wrote no dump: %v", err)
		}
	}
}
