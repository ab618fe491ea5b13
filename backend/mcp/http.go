package mcp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"agenthub/backend/keychain"
	"agenthub/backend/redact"
)

// Header is one HTTP header sent to a Streamable HTTP server. Its value is
// never in the profile: it is read from the environment variable Env or
// from the OS keychain entry Keychain ("service/account") each time the
// session starts, and never logged or put into an error. Prefix (e.g.
// "Bearer ") goes before the value.
type Header struct {
	Name     string
	Env      string
	Keychain string
	Prefix   string
}

// value reads the header's value from its reference.
func (h Header) value() (string, error) {
	switch {
	case h.Env != "":
		v, ok := os.LookupEnv(h.Env)
		if !ok || v == "" {
			return "", fmt.Errorf("header %s: the environment variable %s is not set", h.Name, h.Env)
		}
		redact.Register(v) // a header value is a credential: masked wherever it shows up
		return v, nil
	case h.Keychain != "":
		ref, err := keychain.ParseRef(h.Keychain)
		if err != nil {
			return "", fmt.Errorf("header %s: %w", h.Name, err)
		}
		v, err := keychain.Get(ref)
		if err != nil {
			return "", fmt.Errorf("header %s: %w", h.Name, err)
		}
		return v, nil
	}
	return "", fmt.Errorf("header %s: name an environment variable or a keychain entry for its value", h.Name)
}

// connectHTTP initialises a session with a Streamable HTTP server. The
// session's standalone SSE stream carries the server's notifications
// (tools/list_changed among them).
func (s *server) connectHTTP(ctx context.Context) (*sdk.ClientSession, error) {
	hdr := http.Header{}
	for _, h := range s.cfg.Headers {
		v, err := h.value()
		if err != nil {
			return nil, fmt.Errorf("MCP server %s: %w", s.cfg.Name, err)
		}
		hdr.Set(h.Name, h.Prefix+v)
	}
	hc := &http.Client{
		Transport: headerTransport{base: http.DefaultTransport, h: hdr},
		// The headers may hold credentials: never follow the server elsewhere.
		CheckRedirect: func(*http.Request, []*http.Request) error { return errRedirect },
	}
	t := &sdk.StreamableClientTransport{Endpoint: s.cfg.URL, HTTPClient: hc, MaxRetries: 2}
	sess, err := s.client().Connect(ctx, t, nil)
	if err != nil {
		return nil, fmt.Errorf("initialise MCP server %s at %s: %w", s.cfg.Name, s.cfg.URL, err)
	}
	done := make(chan struct{})
	go func() {
		_ = sess.Wait()
		close(done)
	}()
	s.done = done
	return sess, nil
}

var errRedirect = errors.New("the MCP server redirected; redirects are not followed")

// headerTransport adds the configured headers to every request.
type headerTransport struct {
	base http.RoundTripper
	h    http.Header
}

func (t headerTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	if len(t.h) == 0 {
		return t.base.RoundTrip(r)
	}
	r = r.Clone(r.Context())
	for k, v := range t.h {
		r.Header[k] = v
	}
	return t.base.RoundTrip(r)
}
