package keyproxy

import (
	"bufio"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// upstream is a model server that records what reached it.
type upstream struct {
	*httptest.Server
	mu   sync.Mutex
	seen []*http.Request
}

func newUpstream(t *testing.T, h http.HandlerFunc) *upstream {
	u := &upstream{}
	u.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		u.mu.Lock()
		u.seen = append(u.seen, r.Clone(r.Context()))
		u.mu.Unlock()
		h(w, r)
	}))
	t.Cleanup(u.Close)
	return u
}

func (u *upstream) requests() []*http.Request {
	u.mu.Lock()
	defer u.mu.Unlock()
	return append([]*http.Request(nil), u.seen...)
}

const realKey = "sk-real-key-0123456789"

func TestSwapsTheTokenForTheKey(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") })
	tests := []struct {
		name   string
		scheme Scheme
		set    func(r *http.Request, token string)
		check  func(r *http.Request) string
	}{
		{"bearer", Bearer, func(r *http.Request, tk string) { r.Header.Set("Authorization", "Bearer "+tk) },
			func(r *http.Request) string { return r.Header.Get("Authorization") }},
		{"x-api-key", AnthropicKey, func(r *http.Request, tk string) { r.Header.Set("X-Api-Key", tk) },
			func(r *http.Request) string { return r.Header.Get("X-Api-Key") }},
		{"x-goog-api-key", GoogleKey, func(r *http.Request, tk string) { r.Header.Set("X-Goog-Api-Key", tk) },
			func(r *http.Request) string { return r.Header.Get("X-Goog-Api-Key") }},
		{"query key", GoogleKey, func(r *http.Request, tk string) { r.URL.RawQuery = "alt=sse&key=" + tk },
			func(r *http.Request) string { return r.URL.Query().Get("key") + " " + r.URL.Query().Get("alt") }},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Start(up.URL+"/v1", realKey, tc.scheme)
			if err != nil {
				t.Fatal(err)
			}
			defer p.Close()
			if !strings.HasPrefix(p.URL(), "http://127.0.0.1:") || !strings.HasSuffix(p.URL(), "/v1") {
				t.Fatalf("URL = %q", p.URL())
			}
			if strings.Contains(p.Token(), realKey) {
				t.Fatal("the token holds the key")
			}
			req, _ := http.NewRequest("POST", p.URL()+"/messages", strings.NewReader("{}"))
			tc.set(req, p.Token())
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if resp.StatusCode != 200 || string(body) != "ok" {
				t.Fatalf("%d %s", resp.StatusCode, body)
			}
			seen := up.requests()
			last := seen[len(seen)-1]
			if got := tc.check(last); !strings.Contains(got, realKey) || strings.Contains(got, p.Token()) {
				t.Fatalf("upstream saw %q", got)
			}
			if last.URL.Path != "/v1/messages" {
				t.Fatalf("upstream path %q", last.URL.Path)
			}
		})
	}
}

// TestRefusesWithoutTheToken: a process on loopback without the token (or
// with the real key, or another session's token) gets nothing forwarded.
func TestRefusesWithoutTheToken(t *testing.T) {
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) { _, _ = io.WriteString(w, "ok") })
	p, err := Start(up.URL, realKey, AnthropicKey)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	other, err := Start(up.URL, realKey, AnthropicKey)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	for _, hdr := range []map[string]string{
		{},
		{"X-Api-Key": "wrong"},
		{"X-Api-Key": other.Token()},
		{"Authorization": "Bearer " + other.Token()},
		{"X-Api-Key": p.Token()[:len(p.Token())-1]},
	} {
		req, _ := http.NewRequest("POST", p.URL()+"/v1/messages", strings.NewReader("{}"))
		for k, v := range hdr {
			req.Header.Set(k, v)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusUnauthorized {
			t.Fatalf("%v: status %d", hdr, resp.StatusCode)
		}
	}
	if n := len(up.requests()); n != 0 {
		t.Fatalf("%d requests reached the model server", n)
	}
}

// TestStreams: a server-sent event reaches the CLI before the response
// ends.
func TestStreams(t *testing.T) {
	release := make(chan struct{})
	up := newUpstream(t, func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/event-stream")
		_, _ = io.WriteString(w, "data: first\n\n")
		http.NewResponseController(w).Flush()
		<-release
		_, _ = io.WriteString(w, "data: second\n\n")
	})
	p, err := Start(up.URL, realKey, Bearer)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	req, _ := http.NewRequest("POST", p.URL()+"/responses", strings.NewReader("{}"))
	req.Header.Set("Authorization", "Bearer "+p.Token())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	got := make(chan string, 1)
	go func() {
		line, _ := bufio.NewReader(resp.Body).ReadString('\n')
		got <- line
	}()
	select {
	case line := <-got:
		if line != "data: first\n" {
			t.Fatalf("first line %q", line)
		}
	case <-time.After(30 * time.Second):
		t.Fatal("the first event was held back")
	}
	close(release)
}

func TestStartRefuses(t *testing.T) {
	for _, tc := range []struct{ url, key string }{
		{"http://127.0.0.1:1", ""},
		{"ftp://example.com", "k"},
		{"not a url", "k"},
	} {
		if p, err := Start(tc.url, tc.key, Bearer); err == nil {
			p.Close()
			t.Errorf("Start(%q, %q) succeeded", tc.url, tc.key)
		}
	}
}

// TestUnreachableServerSaysNothingOfIt: the error the CLI gets does not
// name the model server's address.
func TestUnreachableServerSaysNothingOfIt(t *testing.T) {
	up := httptest.NewServer(http.NotFoundHandler())
	addr := up.URL
	up.Close()
	p, err := Start(addr, realKey, Bearer)
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	req, _ := http.NewRequest("POST", p.URL()+"/x", nil)
	req.Header.Set("Authorization", "Bearer "+p.Token())
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	body, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadGateway || strings.Contains(string(body), strings.TrimPrefix(addr, "http://")) {
		t.Fatalf("%d %s", resp.StatusCode, body)
	}
}

func TestLoopbackDirect(t *testing.T) {
	tests := []struct {
		in, want []string
	}{
		{[]string{"PATH=/bin"}, []string{"PATH=/bin"}},
		{[]string{"HTTPS_PROXY=http://proxy:3128"},
			[]string{"HTTPS_PROXY=http://proxy:3128", "NO_PROXY=" + loopback, "no_proxy=" + loopback}},
		{[]string{"http_proxy=http://proxy:3128", "no_proxy=corp.example"},
			[]string{"http_proxy=http://proxy:3128", "no_proxy=corp.example," + loopback, "NO_PROXY=" + loopback}},
	}
	for _, tc := range tests {
		if got := LoopbackDirect(tc.in); strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("LoopbackDirect(%v) = %v, want %v", tc.in, got, tc.want)
		}
	}
}
