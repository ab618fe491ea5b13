// Package keyproxy keeps a profile's API key out of an agent CLI: the CLI
// talks to a reverse proxy inside AgentHub, on loopback, with a random
// per-session token as its "key"; the proxy checks the token and forwards
// the request to the profile's model server with the real key in its
// place. A CLI passes its environment to every command it runs (Claude
// Code's Bash, Gemini CLI's run_shell_command), and any process of the same
// user can read another's environment under /proc; with the proxy, all
// they can find is a token that opens nothing but this proxy, only from
// loopback and only while the session lives.
//
// Invariants: the real key is held only by this package's Proxy (never
// returned, logged or put in an error); requests that do not carry the
// token are refused with 401 and never forwarded; the token is compared in
// constant time. Responses are streamed as they come (SSE).
package keyproxy

import (
	"context"
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strings"
	"sync"
	"time"
)

// Scheme says how the model server expects its key; the CLI sends the
// token the same way, and the proxy swaps it for the key there.
type Scheme int

const (
	// Bearer is "Authorization: Bearer <key>" (OpenAI, Codex).
	Bearer Scheme = iota
	// AnthropicKey is "x-api-key: <key>" (Claude Code with ANTHROPIC_API_KEY).
	AnthropicKey
	// GoogleKey is "x-goog-api-key: <key>" or "?key=<key>" (Gemini API).
	GoogleKey
)

// Proxy is one session's key proxy.
type Proxy struct {
	token    string
	key      string
	scheme   Scheme
	upstream *url.URL
	ln       net.Listener
	srv      *http.Server
	base     string
	once     sync.Once
}

// Start listens on 127.0.0.1 on a free port and forwards to upstream, the
// profile's base URL (its path is kept: the CLI's base URL is the proxy's
// address with the same path). key is the real key; it must not be empty.
func Start(upstream string, key string, scheme Scheme) (*Proxy, error) {
	if key == "" {
		return nil, errors.New("keyproxy: no key to protect")
	}
	u, err := url.Parse(strings.TrimRight(upstream, "/"))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("keyproxy: the model server's address is not an http(s) URL")
	}
	var b [32]byte
	if _, err := rand.Read(b[:]); err != nil {
		return nil, fmt.Errorf("keyproxy: make a token: %w", err)
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("keyproxy: listen on loopback: %w", err)
	}
	p := &Proxy{token: "agenthub-run-" + hex.EncodeToString(b[:]), key: key, scheme: scheme, upstream: u, ln: ln}
	p.base = "http://" + ln.Addr().String() + u.EscapedPath()
	rp := &httputil.ReverseProxy{Rewrite: p.rewrite, FlushInterval: -1, ErrorHandler: p.failed}
	p.srv = &http.Server{Handler: p.guard(rp), ReadHeaderTimeout: 30 * time.Second}
	go func() { _ = p.srv.Serve(ln) }()
	return p, nil
}

// URL is the base URL the CLI is given in place of the model server's.
func (p *Proxy) URL() string { return p.base }

// Token is what the CLI is given in place of the key. It is a secret too:
// register it with the run's redactor.
func (p *Proxy) Token() string { return p.token }

// Close stops the proxy; requests in flight are cut.
func (p *Proxy) Close() {
	if p == nil {
		return
	}
	p.once.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if err := p.srv.Shutdown(ctx); err != nil {
			_ = p.srv.Close()
		}
	})
}

// guard refuses every request that does not carry the token where the
// scheme puts it.
func (p *Proxy) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !p.carriesToken(r) {
			http.Error(w, `{"error":{"type":"authentication_error","message":"AgentHub key proxy: unknown token"}}`,
				http.StatusUnauthorized)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func (p *Proxy) same(got string) bool {
	return subtle.ConstantTimeCompare([]byte(got), []byte(p.token)) == 1
}

func (p *Proxy) carriesToken(r *http.Request) bool {
	switch p.scheme {
	case AnthropicKey:
		if p.same(r.Header.Get("X-Api-Key")) {
			return true
		}
	case GoogleKey:
		if p.same(r.Header.Get("X-Goog-Api-Key")) || p.same(r.URL.Query().Get("key")) {
			return true
		}
	}
	got, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	return ok && p.same(got)
}

// rewrite sends the request to the model server with the key in place of
// the token; nothing else of the request changes.
func (p *Proxy) rewrite(pr *httputil.ProxyRequest) {
	out := pr.Out
	out.URL.Scheme, out.URL.Host = p.upstream.Scheme, p.upstream.Host
	out.Host = p.upstream.Host
	h := out.Header
	if got, ok := strings.CutPrefix(h.Get("Authorization"), "Bearer "); ok && p.same(got) {
		h.Set("Authorization", "Bearer "+p.key)
	}
	if p.same(h.Get("X-Api-Key")) {
		h.Set("X-Api-Key", p.key)
	}
	if p.same(h.Get("X-Goog-Api-Key")) {
		h.Set("X-Goog-Api-Key", p.key)
	}
	if q := out.URL.Query(); p.same(q.Get("key")) {
		q.Set("key", p.key)
		out.URL.RawQuery = q.Encode()
	}
	// The CLI's own forwarding headers say nothing the server needs.
	h.Del("X-Forwarded-For")
}

// failed answers a request the model server could not be reached for. The
// error is not passed on: it may name the server's address.
func (p *Proxy) failed(w http.ResponseWriter, r *http.Request, err error) {
	if errors.Is(err, context.Canceled) {
		return
	}
	http.Error(w, `{"error":{"type":"api_error","message":"AgentHub key proxy: the model server could not be reached"}}`,
		http.StatusBadGateway)
}

// loopback are the hosts a CLI reaches directly, never through an HTTP
// proxy of the environment: the key proxy and local model servers.
const loopback = "127.0.0.1,localhost,::1"

// LoopbackDirect makes sure that, when the environment names an HTTP
// proxy, loopback is exempt from it (NO_PROXY and no_proxy), so a CLI's
// requests to the key proxy or to a local model server never leave the
// machine through that proxy.
func LoopbackDirect(env []string) []string {
	var proxied bool
	for _, kv := range env {
		name, _, _ := strings.Cut(kv, "=")
		switch name {
		case "HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy", "ALL_PROXY", "all_proxy":
			proxied = true
		}
	}
	if !proxied {
		return env
	}
	out := make([]string, 0, len(env)+2)
	seen := map[string]bool{}
	for _, kv := range env {
		name, value, _ := strings.Cut(kv, "=")
		if name == "NO_PROXY" || name == "no_proxy" {
			seen[name] = true
			if value != "" {
				value += ","
			}
			kv = name + "=" + value + loopback
		}
		out = append(out, kv)
	}
	for _, name := range []string{"NO_PROXY", "no_proxy"} {
		if !seen[name] {
			out = append(out, name+"="+loopback)
		}
	}
	return out
}
