package httpapi

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"testing/fstest"
	"time"

	"agenthub/app/api"
	"agenthub/backend"
)

// fixture is a real server on loopback over a real store in a temp dir.
type fixture struct {
	base, token string
	events      *fakeSource
}

func start(t *testing.T) *fixture {
	t.Helper()
	core, err := api.Open(t.Context(), api.Config{Home: t.TempDir(), Version: "test", Surface: backend.SurfaceBrowser})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { core.Close() })
	assets := fstest.MapFS{
		"index.html":    {Data: []byte("<!doctype html><title>AgentHub</title>")},
		"assets/app.js": {Data: []byte("console.log(1)")},
	}
	src := &fakeSource{}
	f := serve(t, New(core, assets, src, NewToken()))
	f.events = src
	return f
}

// serve runs srv on a loopback port until the test ends.
func serve(t *testing.T, srv *Server) *fixture {
	t.Helper()
	ln, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() { _ = srv.Serve(ctx, ln); close(done) }()
	t.Cleanup(func() { cancel(); <-done })
	return &fixture{base: "http://" + ln.Addr().String(), token: srv.Token()}
}

func (f *fixture) do(t *testing.T, method, path, body string, hdr map[string]string) (int, string, http.Header) {
	t.Helper()
	req, err := http.NewRequestWithContext(t.Context(), method, f.base+path, strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

func (f *fixture) auth() map[string]string {
	return map[string]string{"Authorization": "Bearer " + f.token}
}

func TestAuthAndOrigin(t *testing.T) {
	f := start(t)
	tests := []struct {
		name, method, path string
		hdr                map[string]string
		want               int
		wantCode           string
	}{
		{"page without token", "GET", "/", nil, 401, "unauthorized"},
		{"api without token", "GET", "/api/workspaces", nil, 401, "unauthorized"},
		{"wrong token", "GET", "/api/workspaces", map[string]string{"Authorization": "Bearer nope"}, 401, "unauthorized"},
		{"page with token", "GET", "/?token=" + f.token, nil, 200, ""},
		{"api with bearer", "GET", "/api/workspaces", f.auth(), 200, ""},
		{"api with cookie", "GET", "/api/workspaces", map[string]string{"Cookie": CookieName + "=" + f.token}, 200, ""},
		{"cross-origin", "GET", "/api/workspaces", map[string]string{"Authorization": "Bearer " + f.token, "Origin": "http://evil.example"}, 403, "permission_denied"},
		{"cross-site fetch", "GET", "/api/workspaces", map[string]string{"Authorization": "Bearer " + f.token, "Sec-Fetch-Site": "cross-site"}, 403, "permission_denied"},
		{"rebinding host", "GET", "/api/workspaces", map[string]string{"Authorization": "Bearer " + f.token, "Host": "evil.example"}, 403, "permission_denied"},
		{"same origin", "GET", "/api/workspaces", map[string]string{"Authorization": "Bearer " + f.token, "Origin": f.base}, 200, ""},
		{"unknown api route", "GET", "/api/nope", f.auth(), 404, "not_found"},
		{"spa route", "GET", "/runs/x", f.auth(), 200, ""},
		{"missing asset", "GET", "/assets/missing.js", f.auth(), 404, ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			hdr := tt.hdr
			req, _ := http.NewRequestWithContext(t.Context(), tt.method, f.base+tt.path, nil)
			for k, v := range hdr {
				if k == "Host" {
					req.Host = v
					continue
				}
				req.Header.Set(k, v)
			}
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			body, _ := io.ReadAll(resp.Body)
			if resp.StatusCode != tt.want {
				t.Fatalf("status %d, want %d: %s", resp.StatusCode, tt.want, body)
			}
			if tt.wantCode != "" && !strings.Contains(string(body), `"code":"`+tt.wantCode+`"`) {
				t.Fatalf("body %s lacks code %s", body, tt.wantCode)
			}
		})
	}
}

func TestTokenURLSetsStrictCookie(t *testing.T) {
	f := start(t)
	_, body, hdr := f.do(t, "GET", "/?token="+f.token, "", nil)
	if !strings.Contains(body, "<title>AgentHub</title>") {
		t.Fatalf("page not served: %q", body)
	}
	c := hdr.Get("Set-Cookie")
	for _, want := range []string{CookieName + "=" + f.token, "HttpOnly", "SameSite=Strict"} {
		if !strings.Contains(c, want) {
			t.Errorf("Set-Cookie %q lacks %q", c, want)
		}
	}
}

func TestWorkspacesAndSettings(t *testing.T) {
	f := start(t)
	dir := t.TempDir()
	status, body, _ := f.do(t, "POST", "/api/workspaces", fmt.Sprintf(`{"path":%q}`, dir), f.auth())
	if status != 200 {
		t.Fatalf("add: %d %s", status, body)
	}
	var ws backend.Workspace
	if err := json.Unmarshal([]byte(body), &ws); err != nil || ws.ID == "" {
		t.Fatalf("add returned %s (%v)", body, err)
	}
	if strings.Contains(body, `"path"`) {
		t.Errorf("the absolute path leaked into the response: %s", body)
	}
	if status, body, _ := f.do(t, "POST", "/api/workspaces", fmt.Sprintf(`{"path":%q}`, dir), f.auth()); status != 409 {
		t.Errorf("duplicate add: %d %s", status, body)
	}
	if status, body, _ := f.do(t, "POST", "/api/workspaces", `{"path":"/definitely/not/here"}`, f.auth()); status != 400 || !strings.Contains(body, "invalid_input") {
		t.Errorf("missing dir: %d %s", status, body)
	}
	if status, body, _ := f.do(t, "POST", "/api/workspaces", `{"path":`, f.auth()); status != 400 {
		t.Errorf("bad json: %d %s", status, body)
	}
	if _, body, _ := f.do(t, "GET", "/api/workspaces", "", f.auth()); !strings.Contains(body, ws.ID) {
		t.Errorf("list lacks the workspace: %s", body)
	}
	if status, _, _ := f.do(t, "DELETE", "/api/workspaces/"+ws.ID, "", f.auth()); status != 200 {
		t.Errorf("remove: %d", status)
	}
	if status, _, _ := f.do(t, "DELETE", "/api/workspaces/"+ws.ID, "", f.auth()); status != 404 {
		t.Errorf("second remove: %d, want 404", status)
	}
	if status, body, _ := f.do(t, "PUT", "/api/settings", `{"theme":"neon","language":"en"}`, f.auth()); status != 400 {
		t.Errorf("bad theme: %d %s", status, body)
	}
	f.do(t, "PUT", "/api/settings", `{"theme":"dark","language":"zh-CN"}`, f.auth())
	if _, body, _ := f.do(t, "GET", "/api/settings", "", f.auth()); body != "{\"theme\":\"dark\",\"language\":\"zh-CN\",\"ruleLocation\":\"data\"}\n" {
		t.Errorf("settings not persisted: %s", body)
	}
}

func TestListenRefusesNonLoopback(t *testing.T) {
	for _, addr := range []string{"0.0.0.0:0", "192.0.2.1:0", "example.com:80", "nonsense"} {
		if _, err := Listen(addr); err == nil || api.ErrorOf(err).Code != backend.CodeInvalidInput {
			t.Errorf("Listen(%q) = %v, want invalid_input", addr, err)
		}
	}
	ln, err := Listen("127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	_, err = Listen(ln.Addr().String())
	if body := api.ErrorOf(err); body.Code != backend.CodeConflict || !strings.Contains(body.Message, "port in use") {
		t.Errorf("second listen: %+v", body)
	}
}

// fakeSource is an in-memory EventSource: a log per run, replay then live.
type fakeSource struct {
	subs chan chan backend.Event
	log  []backend.Event
}

func (s *fakeSource) Subscribe(ctx context.Context, runID string, after int64) (<-chan backend.Event, error) {
	ch := make(chan backend.Event, 16)
	for _, ev := range s.log {
		if ev.RunID == runID && ev.Sequence > after {
			ch <- ev
		}
	}
	return ch, nil
}

func TestRunStreamResumesFromLastEventID(t *testing.T) {
	f := start(t)
	for i := int64(1); i <= 5; i++ {
		f.events.log = append(f.events.log, backend.Event{SchemaVersion: 1, Sequence: i, RunID: "run_a",
			Type: backend.EvMessageDelta, Payload: json.RawMessage(`{}`)})
	}
	req, _ := http.NewRequestWithContext(t.Context(), "GET", f.base+"/api/runs/run_a/stream", nil)
	req.Header.Set("Authorization", "Bearer "+f.token)
	req.Header.Set("Last-Event-ID", "3")
	ctx, cancel := context.WithTimeout(t.Context(), 5*time.Second)
	defer cancel()
	resp, err := http.DefaultClient.Do(req.WithContext(ctx))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	var ids []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() && len(ids) < 2 {
		if id, ok := strings.CutPrefix(sc.Text(), "id: "); ok {
			ids = append(ids, id)
		}
	}
	if strings.Join(ids, ",") != "4,5" {
		t.Fatalf("resumed ids %v, want [4 5]", ids)
	}
}
