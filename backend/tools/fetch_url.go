package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"html"
	"io"
	"mime"
	"net/http"
	"net/url"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"agenthub/backend"
	"agenthub/backend/approval"
	"agenthub/backend/redact"
)

const (
	defaultFetchTimeout = 30
	maxFetchTimeout     = 120
	// maxFetchBody caps the response body read; the rest is never read.
	maxFetchBody = 256 << 10
	// maxFetchRedirects bounds same-origin redirects followed.
	maxFetchRedirects = 5
)

type fetchArgs struct {
	URL            string `json:"url" jsonschema:"absolute http or https URL to fetch, e.g. https://pkg.go.dev/net/http"`
	Method         string `json:"method,omitempty" jsonschema:"GET (default) or HEAD"`
	TimeoutSeconds int    `json:"timeout_seconds,omitempty" jsonschema:"seconds before the request is abandoned; default 30, at most 120"`
}

var fetchSchema = lazySchema[fetchArgs](func(s *jsonschema.Schema) {
	prop(s, "url").MinLength = jsonschema.Ptr(1)
	prop(s, "method").Enum = []any{"GET", "HEAD"}
	prop(s, "timeout_seconds").Minimum = jsonschema.Ptr(1.0)
	prop(s, "timeout_seconds").Maximum = jsonschema.Ptr(float64(maxFetchTimeout))
})

const fetchDescription = `Fetch a URL over http or https (GET, or HEAD for the headers only), after the ` +
	`user approves the request (or the policy allows its host). The result has the status, the content ` +
	`type and the body as text: HTML is reduced to its text, other text types are shown as they are, ` +
	`binary bodies are described, not shown. At most 256 KiB of the body is read; the result says when it ` +
	`was cut. Redirects within the same scheme, host and port are followed (at most 5); a redirect to ` +
	`another host is reported, not followed: call fetch_url again with the new URL, which needs its own ` +
	`approval. Secrets in the response are redacted.`

// fetchURL makes one HTTP request, always behind the gate as a network
// action. Its subject is the method and the normalised URL (AP9), so an
// approval covers exactly that request, and a redirect away from its
// origin is never followed.
type fetchURL struct {
	// client is the base client; nil means http.DefaultTransport. Tests
	// never need to replace it: they use loopback servers.
	client *http.Client
}

func (fetchURL) Spec() backend.ToolSpec {
	return backend.ToolSpec{Name: FetchURL, Description: fetchDescription, Schema: fetchSchema.Raw()}
}

// fetchRequest is a validated request.
type fetchRequest struct {
	method  string
	url     *url.URL // normalised
	timeout time.Duration
}

// newFetchRequest validates the arguments; its error is for the model.
func newFetchRequest(a fetchArgs) (fetchRequest, error) {
	r := fetchRequest{method: strings.ToUpper(a.Method), timeout: defaultFetchTimeout * time.Second}
	if r.method == "" {
		r.method = http.MethodGet
	}
	if a.TimeoutSeconds > 0 {
		r.timeout = time.Duration(min(a.TimeoutSeconds, maxFetchTimeout)) * time.Second
	}
	u, err := url.Parse(strings.TrimSpace(a.URL))
	switch {
	case err != nil:
		return r, fmt.Errorf("url is not a valid URL: %v", err)
	case u.Scheme != "http" && u.Scheme != "https": // url.Parse lower-cases the scheme
		return r, fmt.Errorf("only http and https URLs can be fetched, not %q", u.Scheme)
	case u.Host == "" || u.Hostname() == "":
		return r, errors.New("url has no host; give an absolute URL such as https://example.com/page")
	case u.User != nil:
		return r, errors.New("url must not contain credentials (user:password@); they would be shown and stored")
	}
	n, err := url.Parse(approval.NormalizeURL(u.String()))
	if err != nil {
		return r, fmt.Errorf("url is not a valid URL: %v", err)
	}
	r.url = n
	return r, nil
}

// fetchPreview is what the reviewer sees.
type fetchPreview struct {
	Method         string `json:"method"`
	URL            string `json:"url"`
	TimeoutSeconds int    `json:"timeoutSeconds"`
	MaxBytes       int    `json:"maxBytes"`
	Redirects      string `json:"redirects"`
}

// Action describes every valid request for the gate as a network action.
// Invalid arguments need no gate: Execute refuses them without a request.
func (fetchURL) Action(_ context.Context, _ backend.ToolEnv, raw json.RawMessage) (*backend.GatedAction, error) {
	a, err := decode[fetchArgs](FetchURL, fetchSchema, raw)
	if err != nil {
		return nil, nil
	}
	r, err := newFetchRequest(a)
	if err != nil {
		return nil, nil
	}
	u := r.url.String()
	preview, err := json.Marshal(fetchPreview{Method: r.method, URL: u, TimeoutSeconds: int(r.timeout / time.Second),
		MaxBytes: maxFetchBody, Redirects: "same scheme, host and port only, at most 5"})
	if err != nil {
		return nil, fmt.Errorf("%s: preview: %w", FetchURL, err)
	}
	subject, err := json.Marshal(map[string]string{"kind": string(backend.ActionNetwork), "method": r.method, "url": u})
	if err != nil {
		return nil, fmt.Errorf("%s: subject: %w", FetchURL, err)
	}
	act := approval.Action{Kind: backend.ActionNetwork, Method: r.method, URL: u}
	risk := approval.RiskOf(act, backend.PolicyResult{Kind: backend.ActionNetwork})
	return &backend.GatedAction{Kind: backend.ActionNetwork, Title: firstLine("Fetch: "+r.method+" "+u, 120),
		Risk: risk, Preview: preview, Subject: subject,
		TitleMessage: backend.Msg("title_fetch", "method", r.method, "url", firstLine(u, 110))}, nil
}

// errCrossOrigin stops the client at a redirect to another origin.
var errCrossOrigin = errors.New("redirect to another origin")

func (t fetchURL) Execute(ctx context.Context, env backend.ToolEnv, in backend.ToolInput) (backend.ToolResult, error) {
	a, err := decode[fetchArgs](FetchURL, fetchSchema, in.Arguments)
	if err != nil {
		return failure(env, "%v", err), nil
	}
	r, err := newFetchRequest(a)
	if err != nil {
		return failure(env, "%s: %v", FetchURL, err), nil
	}
	ctx, cancel := context.WithTimeout(ctx, r.timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, r.method, r.url.String(), nil)
	if err != nil {
		return failure(env, "%s: %v", FetchURL, err), nil
	}
	req.Header.Set("User-Agent", "AgentHub fetch_url")
	req.Header.Set("Accept", "text/html, text/plain, application/json, */*;q=0.5")
	resp, err := t.do(req)
	if err != nil {
		if ctx.Err() != nil && errors.Is(ctx.Err(), context.DeadlineExceeded) {
			return failure(env, "%s: %s %s timed out after %s", FetchURL, r.method, r.url, r.timeout), nil
		}
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return failure(env, "%s: %s %s: %v", FetchURL, r.method, r.url, err), nil
	}
	defer resp.Body.Close()
	out, isErr, err := renderFetch(r, resp)
	if err != nil && ctx.Err() != nil {
		return failure(env, "%s: %s %s timed out after %s while reading the body", FetchURL, r.method, r.url, r.timeout), nil
	}
	res := success(env, redactor().String(out))
	res.IsError = isErr
	return res, nil
}

// do sends req, following redirects only within its origin.
func (t fetchURL) do(req *http.Request) (*http.Response, error) {
	c := &http.Client{}
	if t.client != nil {
		*c = *t.client
	}
	origin := originOf(req.URL)
	c.CheckRedirect = func(next *http.Request, via []*http.Request) error {
		if originOf(next.URL) != origin {
			return http.ErrUseLastResponse
		}
		if len(via) > maxFetchRedirects {
			return fmt.Errorf("more than %d redirects", maxFetchRedirects)
		}
		return nil
	}
	return c.Do(req)
}

func originOf(u *url.URL) string {
	n, err := url.Parse(approval.NormalizeURL(u.String()))
	if err != nil {
		return ""
	}
	return n.Scheme + "://" + n.Host
}

// renderFetch formats the response; a non-2xx status is an error result.
func renderFetch(r fetchRequest, resp *http.Response) (string, bool, error) {
	var b strings.Builder
	final := resp.Request.URL
	fmt.Fprintf(&b, "%s %s\nstatus: %s\n", r.method, r.url, resp.Status)
	if final.String() != r.url.String() {
		fmt.Fprintf(&b, "final url (after same-host redirects): %s\n", final)
	}
	if loc := resp.Header.Get("Location"); resp.StatusCode >= 300 && resp.StatusCode < 400 && loc != "" {
		next, err := final.Parse(loc)
		if err == nil && originOf(next) != originOf(final) {
			fmt.Fprintf(&b, "redirect to another host, not followed: %s\nThe approval covered only %s. "+
				"To follow it, call fetch_url again with url=%q (it needs its own approval).\n",
				next, originOf(r.url), next.String())
			return b.String(), true, nil
		}
	}
	ctype := resp.Header.Get("Content-Type")
	mt, _, _ := mime.ParseMediaType(ctype)
	if ctype == "" {
		ctype = "(none)"
	}
	fmt.Fprintf(&b, "content-type: %s\n", ctype)
	isErr := resp.StatusCode < 200 || resp.StatusCode > 299
	if r.method == http.MethodHead {
		if resp.ContentLength >= 0 {
			fmt.Fprintf(&b, "content-length: %d\n", resp.ContentLength)
		}
		return b.String(), isErr, nil
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxFetchBody+1))
	if err != nil {
		fmt.Fprintf(&b, "error reading the body: %v\n", err)
		return b.String(), true, err
	}
	cut := len(body) > maxFetchBody
	if cut {
		body = body[:maxFetchBody]
	}
	b.WriteString(fetchBody(mt, body))
	if cut {
		fmt.Fprintf(&b, "\n[body truncated: only the first %d KiB were read]\n", maxFetchBody>>10)
	}
	return b.String(), isErr, nil
}

// fetchBody turns a body into text for the model.
// Bodies in other charsets than UTF-8 are shown with invalid bytes replaced.
func fetchBody(mt string, body []byte) string {
	switch {
	case len(body) == 0:
		return "body: (empty)\n"
	case !textual(mt, body):
		return fmt.Sprintf("body: %d bytes of %s, not shown (not text)\n", len(body), orNone(mt))
	}
	text := strings.ToValidUTF8(string(body), "\uFFFD")
	if mt == "text/html" || mt == "application/xhtml+xml" {
		return "body (HTML reduced to text):\n" + htmlText(text) + "\n"
	}
	return "body:\n" + text + "\n"
}

func orNone(s string) string {
	if s == "" {
		return "unknown type"
	}
	return s
}

// textual reports whether a body of media type mt can be shown as text.
func textual(mt string, body []byte) bool {
	switch {
	case strings.HasPrefix(mt, "text/"), strings.HasSuffix(mt, "+json"), strings.HasSuffix(mt, "+xml"):
	case mt == "application/json", mt == "application/xml", mt == "application/javascript",
		mt == "application/x-javascript", mt == "application/ecmascript", mt == "application/yaml",
		mt == "application/x-yaml", mt == "application/toml", mt == "application/x-sh":
	case mt == "" || mt == "application/octet-stream":
		// Untyped: text when it looks like it.
		return utf8.Valid(body[:min(len(body), binarySniff)]) && !containsNUL(body)
	default:
		return false
	}
	return !containsNUL(body)
}

func containsNUL(b []byte) bool {
	for _, c := range b[:min(len(b), binarySniff)] {
		if c == 0 {
			return true
		}
	}
	return false
}

var (
	htmlDrop   = regexp.MustCompile(`(?is)<(script|style|noscript|template|svg|head)\b.*?</(script|style|noscript|template|svg|head)\s*>|<!--.*?-->`)
	htmlBlock  = regexp.MustCompile(`(?i)</?(p|div|br|li|ul|ol|tr|h[1-6]|pre|blockquote|section|article|header|footer|table|hr|dt|dd)\b[^>]*>`)
	htmlTag    = regexp.MustCompile(`(?s)<[^>]*>`)
	htmlSpaces = regexp.MustCompile(`[ \t\r\f\v]+`)
	htmlBlank  = regexp.MustCompile(`\n\s*\n+`)
)

// htmlText reduces HTML to readable text: scripts, styles and comments
// dropped, block elements as line breaks, other tags removed, entities
// decoded, blank runs collapsed. It is not a parser; it only has to be
// readable.
func htmlText(s string) string {
	s = htmlDrop.ReplaceAllString(s, "")
	s = htmlBlock.ReplaceAllString(s, "\n")
	s = htmlTag.ReplaceAllString(s, "")
	s = html.UnescapeString(s)
	s = htmlSpaces.ReplaceAllString(s, " ")
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimSpace(l)
	}
	s = htmlBlank.ReplaceAllString(strings.Join(lines, "\n"), "\n\n")
	return strings.TrimSpace(s)
}

// redactor knows the secrets of AgentHub's environment and the token
// formats; a fetched page must not carry either back to the model.
var redactor = sync.OnceValue(func() *redact.Redactor { return redact.New() })
