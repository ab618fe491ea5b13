package tools

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"

	"agenthub/backend"
	"agenthub/backend/store"
)

// TestScreenshot renders a workspace page (offline: its script and its
// request to a loopback server never happen) and a loopback dev server's
// page (gated as a network GET, and the server sees the request) to PNG
// screenshots with the contract's metadata, pending privacy review. Hosts
// off loopback are refused before anything starts. Needs Chromium, as
// frontend/e2e does.
func TestScreenshot(t *testing.T) {
	if _, err := FindChromium(); err != nil {
		t.Fatalf("%v (the e2e tests need it too: scripts/deps.sh installs it)", err)
	}
	var mu sync.Mutex
	var hits []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		hits = append(hits, r.URL.Path)
		mu.Unlock()
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte(`<body style="background:#0a0"><h1>dev server</h1></body>`))
	}))
	defer srv.Close()

	f := newFixture(t)
	s, env := artifactStore(t, f)
	f.write(t, "site/index.html", `<h1 style="color:red">Hello</h1><img src="`+srv.URL+`/from-page.png">`+
		`<script>fetch("`+srv.URL+`/from-script")</script>`)
	tool := f.tools[Screenshot]
	run := func(args string) (*backend.GatedAction, backend.ToolResult) {
		t.Helper()
		act, err := tool.Action(t.Context(), env(), json.RawMessage(args))
		if err != nil {
			t.Fatal(err)
		}
		res, err := tool.Execute(t.Context(), env(), backend.ToolInput{CallID: "call_1", Arguments: json.RawMessage(args)})
		if err != nil {
			t.Fatal(err)
		}
		return act, res
	}

	act, res := run(`{"path":"site/index.html","viewport":"640x400","theme":"dark"}`)
	if act != nil || res.IsError || !strings.Contains(res.Content, "as artifact art_") {
		t.Fatalf("workspace page: action %+v, result %+v", act, res)
	}
	mu.Lock()
	if len(hits) != 0 {
		t.Errorf("the workspace page reached the network: %v", hits)
	}
	mu.Unlock()

	act, res = run(`{"url":"` + srv.URL + `/app","title":"Dev app"}`)
	if act == nil || act.Kind != backend.ActionNetwork || !strings.Contains(string(act.Subject), srv.URL+"/app") {
		t.Errorf("loopback url: action %+v, want a network GET", act)
	}
	if res.IsError {
		t.Fatalf("loopback url: %+v", res)
	}
	mu.Lock()
	if len(hits) == 0 || hits[0] != "/app" {
		t.Errorf("the dev server saw %v, want /app", hits)
	}
	mu.Unlock()

	list, err := s.Artifacts(t.Context(), store.ArtifactFilter{RunID: "run_1", Kind: backend.ArtifactScreenshot})
	if err != nil || len(list) != 2 {
		t.Fatalf("screenshots stored: %d, %v", len(list), err)
	}
	byRoute := map[string]backend.Artifact{}
	for _, a := range list {
		byRoute[a.Meta.Route] = a
	}
	page := byRoute["site/index.html"]
	if page.MediaType != "image/png" || page.Meta.Viewport != "640x400" || page.Meta.Width != 640 ||
		page.Meta.Height != 400 || page.Meta.Theme != "dark" || page.Meta.Privacy != backend.PrivacyPending {
		t.Errorf("workspace page screenshot: %+v", page)
	}
	dev := byRoute[srv.URL+"/app"]
	if dev.Title != "Dev app" || dev.Meta.Viewport != "1280x800" || dev.Meta.Width != 1280 || dev.Meta.Theme != "light" {
		t.Errorf("dev server screenshot: %+v", dev)
	}

	for _, c := range []struct{ args, want string }{
		{`{"url":"http://example.com/"}`, "only pages on loopback"},
		{`{"url":"http://10.0.0.1:80/"}`, "only pages on loopback"},
		{`{"url":"file:///etc/passwd"}`, "only http and https"},
		{`{"path":"../x.html"}`, "outside"},
		{`{}`, "exactly one of path"},
		{`{"path":"site/index.html","viewport":"99999x1"}`, "viewport"},
	} {
		if act, res := run(c.args); !res.IsError || !strings.Contains(res.Content, c.want) || (act != nil && act.Kind == backend.ActionNetwork) {
			t.Errorf("%s: action %+v result %+v, want an error saying %q", c.args, act, res, c.want)
		}
	}
}
