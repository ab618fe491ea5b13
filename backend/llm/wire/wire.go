// Package wire is the HTTP side shared by the provider clients openai and
// anthropic: one JSON POST whose answer is a server-sent event stream, and
// a decoder for that stream. It replaces the provider SDKs, which were two
// thirds of the CLI binary's functions and cost startup time in package
// init (docs/PERFORMANCE.md), for the one endpoint each client calls.
//
// Invariants: it never reads environment variables (a key comes only from
// the caller's header), never logs headers or bodies, never retries
// (retrying is llm.Fallback's job, so there is one retry policy), and never
// follows a redirect to another origin (x-api-key, unlike Authorization, is
// not dropped by net/http on a cross-origin redirect).
package wire

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"

	"agenthub/backend/llm"
)

// UserAgent is sent with every model request.
const UserAgent = "agenthub"

// Endpoint joins a base URL and an endpoint path the way the SDKs did: the
// base keeps its path (a local server's /v1 prefix), with a slash appended
// when missing, and path is resolved under it.
func Endpoint(base, path string) (string, error) {
	u, err := url.Parse(base)
	if err != nil {
		return "", fmt.Errorf("base URL: %w", err)
	}
	if u.Scheme != "http" && u.Scheme != "https" {
		return "", fmt.Errorf("base URL %q: scheme must be http or https", u.Redacted())
	}
	if !strings.HasSuffix(u.Path, "/") {
		u.Path += "/"
		if u.RawPath != "" {
			u.RawPath += "/"
		}
	}
	return u.ResolveReference(&url.URL{Path: strings.TrimLeft(path, "/")}).String(), nil
}

// Post sends body as JSON to endpoint and returns the open response of a
// 2xx answer, for the caller to read as a stream and close. x observes the
// exchange; every failure is returned classified by x (a provider *llm.Error
// or the context's error).
func Post(ctx context.Context, hc *http.Client, endpoint string, header http.Header, body any, x *llm.Exchange, provider string) (*http.Response, error) {
	b, err := json.Marshal(body)
	if err != nil {
		return nil, fmt.Errorf("%s request: %w", provider, err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, endpoint, bytes.NewReader(b))
	if err != nil {
		return nil, fmt.Errorf("%s request: %w", provider, err)
	}
	for k, v := range header {
		req.Header[k] = append([]string(nil), v...) // the client's header is shared by concurrent calls
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Accept", "text/event-stream")
	req.Header.Set("User-Agent", UserAgent)
	res, err := x.Middleware(req, sameOrigin(hc).Do)
	if err != nil {
		return nil, x.Err(provider, err)
	}
	if res.StatusCode >= 400 {
		_ = res.Body.Close()
		return nil, x.Err(provider, fmt.Errorf("HTTP %d", res.StatusCode))
	}
	if res.StatusCode < 200 || res.StatusCode > 299 {
		_ = res.Body.Close()
		e := llm.Classify(provider, res.StatusCode, "unexpected HTTP status (a redirect to another origin is not followed)", 0)
		return nil, e
	}
	return res, nil
}

// sameOrigin returns a copy of hc that refuses redirects leaving the
// request's origin, so the key header never reaches another host.
func sameOrigin(hc *http.Client) *http.Client {
	if hc == nil {
		hc = http.DefaultClient
	}
	c := *hc
	next := hc.CheckRedirect
	c.CheckRedirect = func(req *http.Request, via []*http.Request) error {
		if first := via[0].URL; req.URL.Scheme != first.Scheme || req.URL.Host != first.Host {
			return http.ErrUseLastResponse
		}
		if next != nil {
			return next(req, via)
		}
		if len(via) >= 10 {
			return errors.New("stopped after 10 redirects")
		}
		return nil
	}
	return &c
}

// Each reads the event stream of body and calls fn for each event, until
// the end of the stream (nil), fn's error (returned as is) or a read error,
// returned as the context's error when the caller gave up, else classified
// by x (a dropped connection is a truncated stream).
func Each(ctx context.Context, body io.Reader, x *llm.Exchange, provider string, fn func(Event) error) error {
	events := NewReader(body)
	for {
		ev, err := events.Next()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return x.Err(provider, err)
		}
		if err := fn(ev); err != nil {
			return err
		}
	}
}

// Event is one server-sent event: its name ("" when the server sent none)
// and its data lines joined by newlines.
type Event struct {
	Name string
	Data []byte
}

// Reader decodes a text/event-stream (the WHATWG event-stream format; lines
// end in LF or CRLF: no server of either API ends them in a lone CR).
type Reader struct {
	r *bufio.Reader
}

// NewReader decodes r.
func NewReader(r io.Reader) *Reader { return &Reader{r: bufio.NewReaderSize(r, 32<<10)} }

// Next returns the next event with data. It returns io.EOF at the end of the
// stream; an event cut off by the end of the stream (no blank line after
// it) is discarded, as the format says, so a dropped connection shows as a
// stream that never finished, not as a malformed event. Read errors are
// returned as they are.
func (d *Reader) Next() (Event, error) {
	var ev Event
	var data bytes.Buffer
	hasData := false
	for {
		line, err := d.r.ReadBytes('\n')
		if err != nil {
			if err == io.EOF {
				return Event{}, io.EOF
			}
			return Event{}, err
		}
		line = bytes.TrimSuffix(bytes.TrimSuffix(line, []byte("\n")), []byte("\r"))
		if len(line) == 0 {
			if hasData {
				ev.Data = data.Bytes()
				return ev, nil
			}
			ev = Event{}
			continue
		}
		if line[0] == ':' {
			continue // comment, used as keep-alive
		}
		field, value, _ := bytes.Cut(line, []byte(":"))
		value = bytes.TrimPrefix(value, []byte(" "))
		switch string(field) {
		case "event":
			ev.Name = string(value)
		case "data":
			if hasData {
				data.WriteByte('\n')
			}
			data.Write(value)
			hasData = true
		}
	}
}
