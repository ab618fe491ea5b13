package tools

import (
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"agenthub/backend"
	"agenthub/backend/approval"
)

// fetchServers are two loopback servers: "other" is another origin (same
// address, another port).
func fetchServers(t *testing.T) (main, other *httptest.Server) {
	t.Helper()
	other = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "other origin reached")
	}))
	t.Cleanup(other.Close)
	mux := http.NewServeMux()
	mux.HandleFunc("/text", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprint(w, "hello from the server\ntoken ghp_0123456789abcdefghijABCDEFGHIJ012345\n")
	})
	mux.HandleFunc("/page", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, `<html><head><title>T</title><style>p{}</style></head><body><script>evil()</script>`+
			`<h1>Title &amp; more</h1><p>First   para</p><!-- hidden --><div>Second <b>bold</b></div></body></html>`)
	})
	mux.HandleFunc("/big", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain")
		fmt.Fprint(w, strings.Repeat("a", maxFetchBody+5000))
	})
	mux.HandleFunc("/bin", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/png")
		w.Write([]byte("\x89PNG\x00\x00binary"))
	})
	mux.HandleFunc("/missing", func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "no such page", http.StatusNotFound)
	})
	mux.HandleFunc("/hop", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/text", http.StatusFound) })
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/loop", http.StatusFound) })
	mux.HandleFunc("/away", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/landing", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/slow", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(10 * time.Second):
		}
	})
	main = httptest.NewServer(mux)
	t.Cleanup(main.Close)
	return main, other
}

func TestFetchURLAction(t *testing.T) {
	f := newFixture(t)
	tests := []struct {
		args        string
		wantSubject map[string]string // nil: no gate (invalid request)
	}{
		{`{"url":"HTTP://Example.COM:80/a/b?q=1#frag"}`,
			map[string]string{"kind": "network", "method": "GET", "url": "http://example.com/a/b?q=1"}},
		{`{"url":"https://Example.com:443/","method":"HEAD"}`,
			map[string]string{"kind": "network", "method": "HEAD", "url": "https://example.com/"}},
		{`{"url":"https://example.com:8443/x"}`,
			map[string]string{"kind": "network", "method": "GET", "url": "https://example.com:8443/x"}},
		{`{"url":"file:///etc/passwd"}`, nil},
		{`{"url":"ftp://example.com/x"}`, nil},
		{`{"url":"https://user:pw@example.com/"}`, nil},
		{`{"url":"/relative"}`, nil},
		{`{"url":"https://example.com/","method":"POST"}`, nil},
	}
	for _, tt := range tests {
		a := f.action(t, FetchURL, tt.args)
		if tt.wantSubject == nil {
			if a != nil {
				t.Errorf("Action(%s) = %+v, want nil", tt.args, a)
			}
			continue
		}
		if a == nil {
			t.Fatalf("Action(%s) = nil", tt.args)
		}
		if a.Kind != backend.ActionNetwork {
			t.Errorf("kind %s", a.Kind)
		}
		var got map[string]string
		mustJSON(t, a.Subject, &got)
		if diff := cmp.Diff(tt.wantSubject, got); diff != "" {
			t.Errorf("Action(%s) subject (-want +got):\n%s", tt.args, diff)
		}
		// The subject is what the approval package hashes for a network action (AP9).
		act, err := approval.ActionOf(backend.GateRequest{Tool: FetchURL, Action: *a})
		if err != nil {
			t.Fatal(err)
		}
		want, _ := approval.Subject(approval.Action{Kind: backend.ActionNetwork, Method: got["method"], URL: got["url"]})
		gotSub, _ := approval.Subject(act)
		if diff := cmp.Diff(want, gotSub); diff != "" {
			t.Errorf("approval subject (-want +got):\n%s", diff)
		}
		var p fetchPreview
		mustJSON(t, a.Preview, &p)
		if p.URL != got["url"] || p.Method != got["method"] || !strings.Contains(a.Title, got["url"]) {
			t.Errorf("preview %+v, title %q", p, a.Title)
		}
	}
	// The gate sees the same action again before execution (AP10).
	a1, a2 := f.action(t, FetchURL, `{"url":"https://EXAMPLE.com/x"}`), f.action(t, FetchURL, `{"url":"https://EXAMPLE.com/x"}`)
	if string(a1.Subject) != string(a2.Subject) || string(a1.Preview) != string(a2.Preview) {
		t.Error("Action is not deterministic")
	}
}

func TestFetchURLExecute(t *testing.T) {
	f := newFixture(t)
	srv, other := fetchServers(t)
	_, otherPort, _ := net.SplitHostPort(strings.TrimPrefix(other.URL, "http://"))
	tests := []struct {
		name    string
		args    string
		isErr   bool
		want    []string
		notWant []string
	}{
		{name: "text", args: `{"url":"` + srv.URL + `/text"}`,
			want:    []string{"status: 200 OK", "content-type: text/plain; charset=utf-8", "hello from the server", "[REDACTED:github_token]"},
			notWant: []string{"ghp_0123"}},
		{name: "html to text", args: `{"url":"` + srv.URL + `/page"}`,
			want:    []string{"HTML reduced to text", "Title & more\n", "First para", "Second bold"},
			notWant: []string{"evil", "<p>", "hidden", "p{}"}},
		{name: "body cap", args: `{"url":"` + srv.URL + `/big"}`,
			want: []string{"[body truncated: only the first 256 KiB were read]"}},
		{name: "binary", args: `{"url":"` + srv.URL + `/bin"}`,
			want: []string{"body: 12 bytes of image/png, not shown"}, notWant: []string{"PNG"}},
		{name: "non-2xx", args: `{"url":"` + srv.URL + `/missing"}`, isErr: true,
			want: []string{"status: 404 Not Found", "no such page"}},
		{name: "head", args: `{"url":"` + srv.URL + `/text","method":"HEAD"}`,
			want: []string{"HEAD " + srv.URL + "/text", "status: 200 OK"}, notWant: []string{"hello"}},
		{name: "same-host redirect followed", args: `{"url":"` + srv.URL + `/hop"}`,
			want: []string{"final url (after same-host redirects): " + srv.URL + "/text", "hello from the server"}},
		{name: "redirect loop", args: `{"url":"` + srv.URL + `/loop"}`, isErr: true, want: []string{"more than 5 redirects"}},
		{name: "cross-host redirect not followed", args: `{"url":"` + srv.URL + `/away"}`, isErr: true,
			want: []string{"status: 301 Moved Permanently", "redirect to another host, not followed: " + other.URL + "/landing",
				`call fetch_url again with url="` + other.URL + `/landing"`, ":" + otherPort},
			notWant: []string{"other origin reached"}},
		{name: "bad scheme", args: `{"url":"file:///etc/passwd"}`, isErr: true, want: []string{`only http and https URLs can be fetched, not "file"`}},
		{name: "credentials", args: `{"url":"http://u:p@127.0.0.1/"}`, isErr: true, want: []string{"must not contain credentials"}},
		{name: "bad method", args: `{"url":"` + srv.URL + `/text","method":"DELETE"}`, isErr: true, want: []string{"invalid arguments for fetch_url"}},
		{name: "timeout", args: `{"url":"` + srv.URL + `/slow","timeout_seconds":1}`, isErr: true, want: []string{"timed out after 1s"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			start := time.Now()
			res := f.execute(t, FetchURL, tt.args)
			if res.IsError != tt.isErr {
				t.Errorf("IsError = %v, want %v:\n%s", res.IsError, tt.isErr, res.Content)
			}
			for _, w := range tt.want {
				if !strings.Contains(res.Content, w) {
					t.Errorf("result lacks %q:\n%.2000s", w, res.Content)
				}
			}
			for _, n := range tt.notWant {
				if strings.Contains(res.Content, n) {
					t.Errorf("result contains %q:\n%.2000s", n, res.Content)
				}
			}
			if len(res.Content) > maxFetchBody+4096 {
				t.Errorf("result is %d bytes", len(res.Content))
			}
			if d := time.Since(start); d > 5*time.Second {
				t.Errorf("took %s", d)
			}
		})
	}
}

func TestFetchURLSpec(t *testing.T) {
	var s struct {
		Required []string `json:"required"`
	}
	if err := json.Unmarshal(fetchURL{}.Spec().Schema, &s); err != nil || !cmp.Equal(s.Required, []string{"url"}) {
		t.Errorf("required = %v (%v)", s.Required, err)
	}
}

// TestFetchURLPolicy: the action asks under the default policy and is
// allowed only when a network rule names its host (and method).
func TestFetchURLPolicy(t *testing.T) {
	f := newFixture(t)
	a := f.action(t, FetchURL, `{"url":"https://Docs.Example.com/page"}`)
	act, err := approval.ActionOf(backend.GateRequest{Tool: FetchURL, Action: *a})
	if err != nil {
		t.Fatal(err)
	}
	allowDocs := &approval.Policy{Version: approval.PolicyVersion,
		Network: []approval.NetworkRule{{Host: "docs.example.com", Method: "GET", Verdict: backend.Allow}}}
	allowOther := &approval.Policy{Version: approval.PolicyVersion,
		Network: []approval.NetworkRule{{Host: "other.example.com", Verdict: backend.Allow}}}
	for _, tt := range []struct {
		name string
		p    *approval.Policy
		want backend.Verdict
	}{
		{"default asks", approval.DefaultPolicy(), backend.Ask},
		{"host rule allows", allowDocs, backend.Allow},
		{"other host asks", allowOther, backend.Ask},
	} {
		if got := tt.p.Evaluate(act).Verdict; got != tt.want {
			t.Errorf("%s: verdict %s, want %s", tt.name, got, tt.want)
		}
	}
	head := f.action(t, FetchURL, `{"url":"https://docs.example.com/page","method":"HEAD"}`)
	act, _ = approval.ActionOf(backend.GateRequest{Tool: FetchURL, Action: *head})
	if got := allowDocs.Evaluate(act).Verdict; got != backend.Ask {
		t.Errorf("HEAD under a GET rule: %s, want ask", got)
	}
}
