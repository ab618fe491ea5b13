package mcp

import (
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"agenthub/backend"
	"agenthub/backend/llm/llmtest"
)

const tokenEnv = "AGENTHUB_TEST_MCP_TOKEN"

// httpConfig serves the helper's MCP server over Streamable HTTP on
// loopback; the endpoint refuses requests without the token header.
func httpConfig(t *testing.T, name string, allowReadOnly bool) Config {
	t.Helper()
	srv := newHelperServer()
	h := sdk.NewStreamableHTTPHandler(func(*http.Request) *sdk.Server { return srv }, nil)
	ts := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Token") != "k=s3cret" {
			http.Error(w, "no token", http.StatusUnauthorized)
			return
		}
		h.ServeHTTP(w, r)
	}))
	t.Cleanup(func() {
		ts.CloseClientConnections()
		ts.Close()
	})
	t.Setenv(tokenEnv, "s3cret")
	return Config{Name: name, URL: ts.URL + "/mcp", AllowReadOnly: allowReadOnly,
		Headers: []Header{{Name: "X-Token", Env: tokenEnv, Prefix: "k="}}}
}

// transports runs a test against the helper over stdio and over HTTP.
func transports(t *testing.T, f func(t *testing.T, cfg func(t *testing.T, name string, allowReadOnly bool) Config)) {
	t.Run("stdio", func(t *testing.T) { f(t, helperConfig) })
	t.Run("http", func(t *testing.T) { f(t, httpConfig) })
}

func TestHTTPServerWithHeader(t *testing.T) {
	s := NewSet([]Config{httpConfig(t, "web", false)}, nil)
	defer s.Close()
	if res := call(t, toolByName(t, s, "mcp__web__echo"), `{"text":"over http"}`); res.IsError || res.Content != "echo: over http" {
		t.Fatalf("echo: %+v", res)
	}
	if res := call(t, toolByName(t, s, "mcp__web__fail"), `{}`); !res.IsError || res.Content != "no such record" {
		t.Fatalf("fail: %+v", res)
	}
}

// TestHTTPHeaderMissingOrWrong: without the header's variable the server
// offers no tools and the error names the variable, never a value; a wrong
// value is refused by the server.
func TestHTTPHeaderMissingOrWrong(t *testing.T) {
	cfg := httpConfig(t, "web", false)
	t.Setenv(tokenEnv, "")
	s := NewSet([]Config{cfg}, nil)
	defer s.Close()
	if ts := s.Tools(t.Context()); len(ts) != 0 {
		t.Fatalf("tools without the token: %d", len(ts))
	}
	if _, err := s.servers[0].live(t.Context()); err == nil || !strings.Contains(err.Error(), tokenEnv+" is not set") {
		t.Errorf("missing variable: %v", err)
	}
	t.Setenv(tokenEnv, "wrong")
	s2 := NewSet([]Config{cfg}, nil)
	defer s2.Close()
	_, err := s2.servers[0].live(t.Context())
	if err == nil {
		t.Fatal("a wrong token was accepted")
	}
	if strings.Contains(err.Error(), "wrong") {
		t.Errorf("the header value leaked into the error: %v", err)
	}
}

func names(ts []backend.Tool) []string {
	var out []string
	for _, t := range ts {
		out = append(out, t.Spec().Name)
	}
	return out
}

// TestToolListChanged: after the server adds a tool and sends
// notifications/tools/list_changed, the set offers the new tool and it
// can be called.
func TestToolListChanged(t *testing.T) {
	transports(t, func(t *testing.T, cfg func(*testing.T, string, bool) Config) {
		s := NewSet([]Config{cfg(t, "demo", false)}, nil)
		defer s.Close()
		if slices.Contains(names(s.Tools(t.Context())), "mcp__demo__extra") {
			t.Fatal("extra listed before it was added")
		}
		if res := call(t, toolByName(t, s, "mcp__demo__grow"), `{}`); res.Content != "grown" {
			t.Fatalf("grow: %+v", res)
		}
		if res := call(t, toolByName(t, s, "mcp__demo__extra"), `{}`); res.IsError || res.Content != "extra ran" {
			t.Fatalf("extra: %+v", res)
		}
	})
}

// TestListChangedReachesNextInference: the model calls a tool that adds a
// tool mid-run; the next request to the model offers it, and the model can
// call it.
func TestListChangedReachesNextInference(t *testing.T) {
	transports(t, func(t *testing.T, cfg func(*testing.T, string, bool) Config) {
		set := NewSet([]Config{cfg(t, "demo", true)}, nil)
		defer set.Close()
		n := startNative(t, set, mcpCall("c1", "mcp__demo__grow", `{}`), mcpCall("c2", "mcp__demo__extra", `{}`),
			llmtest.Turn{Text: []string{"done"}})
		n.wait(t, backend.RunNeedsApproval) // extra is not annotated read-only
		if n.seen(t, 0, `"name":"mcp__demo__extra"`) {
			t.Fatal("the first request offered extra")
		}
		if !n.seen(t, 1, `"name":"mcp__demo__extra"`) || !n.seen(t, 1, "grown") {
			t.Fatal("the request after grow did not offer extra")
		}
		aps, _ := n.e.Approvals(t.Context(), n.run.ID)
		if len(aps) != 1 {
			t.Fatalf("approvals: %v", aps)
		}
		if _, err := n.e.Decide(t.Context(), backend.Decision{ApprovalID: aps[0].ID, Kind: backend.ApproveOnce,
			SubjectHash: aps[0].SubjectHash, Actor: "me", Surface: backend.SurfaceCLI}); err != nil {
			t.Fatal(err)
		}
		n.wait(t, backend.RunCompleted)
		if !n.seen(t, 2, "extra ran") {
			t.Error("the model did not see extra's result")
		}
	})
}
