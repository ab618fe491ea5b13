package tools

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/google/jsonschema-go/jsonschema"

	"agenthub/backend"
	"agenthub/backend/approval"
	"agenthub/backend/preview"
	"agenthub/backend/proc"
)

// Screenshot is the tool that renders a page with headless Chromium.
const Screenshot = "screenshot"

type screenshotArgs struct {
	Path     string `json:"path,omitempty" jsonschema:"workspace-relative HTML page to render, e.g. site/index.html (rendered offline, without scripts)"`
	URL      string `json:"url,omitempty" jsonschema:"a page of a dev server on loopback, e.g. http://127.0.0.1:5173/ (asks for network access)"`
	Viewport string `json:"viewport,omitempty" jsonschema:"WIDTHxHEIGHT in CSS pixels; default 1280x800"`
	Theme    string `json:"theme,omitempty" jsonschema:"light or dark; default light"`
	Title    string `json:"title,omitempty" jsonschema:"a short title for the reviewer"`
}

var screenshotSchema = lazySchema[screenshotArgs](func(s *jsonschema.Schema) {
	prop(s, "viewport").Pattern = `^[0-9]{2,4}x[0-9]{2,4}$`
	prop(s, "theme").Enum = []any{"light", "dark"}
	prop(s, "title").MaxLength = jsonschema.Ptr(200)
})

const screenshotDescription = `Take a screenshot of a web page for the user to review, as an artifact of the run: ` +
	`either an HTML file of the workspace (path; rendered offline, with scripts and external resources removed) or ` +
	`a page of a development server on loopback (url: http://127.0.0.1:PORT/…, localhost or [::1]; asks the user ` +
	`for network access like fetch_url; other hosts are refused, and the page cannot load anything beyond loopback). ` +
	`Needs Chromium (agenthub doctor says whether it is installed). The screenshot waits for the user's privacy ` +
	`review before it is shared. The result names the artifact's id.`

// screenshot renders a workspace page or a loopback URL to a PNG artifact.
type screenshot struct{}

func (screenshot) Spec() backend.ToolSpec {
	return backend.ToolSpec{Name: Screenshot, Description: screenshotDescription, Schema: screenshotSchema.Raw()}
}

// Action gates a URL as the network action fetch_url's GET would be; a
// workspace page is a read (nil) unless it is a secret file.
func (screenshot) Action(ctx context.Context, env backend.ToolEnv, raw json.RawMessage) (*backend.GatedAction, error) {
	a, err := decode[screenshotArgs](Screenshot, screenshotSchema, raw)
	if err != nil {
		return nil, nil
	}
	if a.URL == "" {
		return publishArtifact{}.Action(ctx, env, mustRaw(map[string]string{"path": a.Path}))
	}
	u, err := loopbackURL(a.URL)
	if err != nil {
		return nil, nil
	}
	subject, err := json.Marshal(map[string]string{"kind": string(backend.ActionNetwork), "method": "GET", "url": u})
	if err != nil {
		return nil, fmt.Errorf("%s: subject: %w", Screenshot, err)
	}
	preview, err := json.Marshal(map[string]string{"tool": Screenshot, "method": "GET", "url": u,
		"reason": "render this loopback page in headless Chromium and keep a screenshot"})
	if err != nil {
		return nil, fmt.Errorf("%s: preview: %w", Screenshot, err)
	}
	act := approval.Action{Kind: backend.ActionNetwork, Method: "GET", URL: u}
	return &backend.GatedAction{Kind: backend.ActionNetwork, Title: firstLine("Screenshot: GET "+u, 120),
		Risk: approval.RiskOf(act, backend.PolicyResult{Kind: backend.ActionNetwork}), Preview: preview,
		Subject: subject}, nil
}

func mustRaw(v any) json.RawMessage {
	b, _ := json.Marshal(v) // a map of strings always encodes
	return b
}

func (screenshot) Execute(ctx context.Context, env backend.ToolEnv, in backend.ToolInput) (backend.ToolResult, error) {
	a, err := decode[screenshotArgs](Screenshot, screenshotSchema, in.Arguments)
	if err != nil {
		return failure(env, "%v", err), nil
	}
	if (a.Path == "") == (a.URL == "") {
		return failure(env, "%s: give exactly one of path (a workspace HTML page) and url (a loopback page)", Screenshot), nil
	}
	if env.Artifacts == nil {
		return failure(env, "%s: this run keeps no artifacts", Screenshot), nil
	}
	w, h, err := viewport(a.Viewport)
	if err != nil {
		return failure(env, "%s: %v", Screenshot, err), nil
	}
	theme := a.Theme
	if theme == "" {
		theme = "light"
	}
	bin, err := FindChromium()
	if err != nil {
		return failure(env, "%s: %v", Screenshot, err), nil
	}
	tmp, err := os.MkdirTemp("", "agenthub-shot-")
	if err != nil {
		return backend.ToolResult{}, fmt.Errorf("%s: temp dir: %w", Screenshot, err)
	}
	defer os.RemoveAll(tmp)
	target, route := a.URL, a.URL
	if a.Path != "" {
		// The page is read through the workspace like publish_artifact and
		// rendered from its preview rewrite: no script, nothing fetched.
		d, err := ReadArtifact(env, a.Path, backend.ArtifactHTML)
		if err != nil {
			return failure(env, "%s: %v", Screenshot, err), nil
		}
		page := filepath.Join(tmp, "page.html")
		if err := os.WriteFile(page, preview.HTML(d.Content), 0o600); err != nil {
			return backend.ToolResult{}, fmt.Errorf("%s: stage the page: %w", Screenshot, err)
		}
		target, route = (&url.URL{Scheme: "file", Path: page}).String(), d.Path
	} else if target, err = loopbackURL(a.URL); err != nil {
		return failure(env, "%s: %v", Screenshot, err), nil
	} else {
		route = target
	}
	png, err := capture(ctx, bin, tmp, target, w, h, theme, env)
	if err != nil {
		return failure(env, "%s: %v", Screenshot, err), nil
	}
	d := backend.ArtifactDraft{Kind: backend.ArtifactScreenshot, Path: a.Path, Title: strings.TrimSpace(a.Title),
		Producer: Screenshot, CallID: in.CallID, Content: png,
		Meta: backend.ArtifactMeta{Viewport: fmt.Sprintf("%dx%d", w, h), Route: route, Theme: theme}}
	if d.Title == "" {
		d.Title = "Screenshot of " + route
	}
	if err := sniff(&d); err != nil {
		return failure(env, "%s: Chromium wrote no PNG: %v", Screenshot, err), nil
	}
	art, err := env.Artifacts(d)
	if err != nil {
		return failure(env, "%s: %s", Screenshot, artifactMessage(err)), nil
	}
	return success(env, fmt.Sprintf("took a %dx%d screenshot of %s as artifact %s (%d bytes); it waits for the user's privacy review\n",
		art.Meta.Width, art.Meta.Height, route, art.ID, art.Size)), nil
}

// capture runs headless Chromium once. Anything that is not loopback goes
// to a proxy that does not exist (Chromium sends loopback direct), so a
// loopback page cannot pull in the internet; a workspace page has nothing
// to fetch at all. Chromium's profile and output live in tmp.
func capture(ctx context.Context, bin, tmp, target string, w, h int, theme string, env backend.ToolEnv) ([]byte, error) {
	out := filepath.Join(tmp, "shot.png")
	args := []string{"--headless", "--disable-gpu", "--no-sandbox", "--no-first-run", "--disable-extensions",
		"--disable-background-networking", "--disable-component-update", "--disable-sync", "--hide-scrollbars",
		"--proxy-server=http://127.0.0.1:9", "--user-data-dir=" + filepath.Join(tmp, "profile"),
		fmt.Sprintf("--window-size=%d,%d", w, h), "--screenshot=" + out, "--virtual-time-budget=5000"}
	if theme == "dark" {
		args = append(args, "--force-dark-mode", "--blink-settings=preferredColorScheme=0")
	}
	p, err := proc.Start(ctx, proc.Spec{Path: bin, Args: append(args, target), Dir: tmp, Timeout: 60 * time.Second,
		Env: []string{"HOME=" + tmp, "TMPDIR=" + tmp, "LANG=C.UTF-8"}, MaxOutput: 64 << 10})
	if err != nil {
		return nil, fmt.Errorf("start Chromium: %v", err)
	}
	if env.Track != nil {
		env.Track(p)
	}
	res, err := p.Wait()
	if errors.Is(err, proc.ErrTimeout) {
		return nil, errors.New("Chromium did not finish within 60 s")
	}
	if err != nil {
		return nil, fmt.Errorf("Chromium: %v", err)
	}
	png, rerr := os.ReadFile(out)
	if rerr != nil || len(png) == 0 {
		return nil, fmt.Errorf("Chromium exited %d without a screenshot: %s", res.ExitCode,
			firstLine(strings.TrimSpace(string(res.Stderr)), 300))
	}
	return png, nil
}

// FindChromium returns the headless browser the screenshot tool uses:
// $AGENTHUB_CHROMIUM, else chromium, chromium-browser or google-chrome on
// PATH (or /usr/bin/chromium). agenthub doctor reports the same.
func FindChromium() (string, error) {
	if p := os.Getenv("AGENTHUB_CHROMIUM"); p != "" {
		if fi, err := os.Stat(p); err == nil && !fi.IsDir() {
			return p, nil
		}
		return "", fmt.Errorf("AGENTHUB_CHROMIUM names %s, which is not a file", filepath.Base(p))
	}
	path := os.Getenv("PATH") + string(os.PathListSeparator) + "/usr/bin"
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome", "google-chrome-stable"} {
		if p, err := proc.Look(name, path); err == nil {
			return p, nil
		}
	}
	return "", errors.New("no Chromium found (chromium, chromium-browser or google-chrome on PATH, or AGENTHUB_CHROMIUM); install one to take screenshots")
}

var viewportRE = regexp.MustCompile(`^([0-9]{2,4})x([0-9]{2,4})$`)

// viewport parses WIDTHxHEIGHT, 200 to 3840 by 200 to 2160; "" is 1280x800.
func viewport(s string) (int, int, error) {
	if s == "" {
		return 1280, 800, nil
	}
	m := viewportRE.FindStringSubmatch(s)
	if m == nil {
		return 0, 0, fmt.Errorf("viewport %q is not WIDTHxHEIGHT, e.g. 1280x800", s)
	}
	w, _ := strconv.Atoi(m[1])
	h, _ := strconv.Atoi(m[2])
	if w < 200 || w > 3840 || h < 200 || h > 2160 {
		return 0, 0, fmt.Errorf("viewport %s is outside 200x200 to 3840x2160", s)
	}
	return w, h, nil
}

// loopbackURL accepts an http(s) URL on 127.0.0.0/8, ::1 or localhost,
// without credentials, and returns it normalised as the gate's subject.
func loopbackURL(raw string) (string, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	switch {
	case err != nil:
		return "", fmt.Errorf("url is not a valid URL: %v", err)
	case u.Scheme != "http" && u.Scheme != "https":
		return "", fmt.Errorf("only http and https pages can be screenshot, not %q", u.Scheme)
	case u.User != nil:
		return "", errors.New("url must not contain credentials")
	}
	host := u.Hostname()
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return "", fmt.Errorf("only pages on loopback (127.0.0.1, ::1, localhost) can be screenshot, not %s", host)
	}
	return approval.NormalizeURL(u.String()), nil
}
