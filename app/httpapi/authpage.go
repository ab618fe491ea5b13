package httpapi

import (
	"html/template"
	"log/slog"
	"net/http"
	"strings"
)

// wantsPage reports whether a request is a browser opening a page rather
// than a client calling the API: a page load gets a page it can read, not
// raw JSON (issue 21: a wrong token showed a JSON body in the browser).
func wantsPage(r *http.Request) bool {
	return (r.Method == http.MethodGet || r.Method == http.MethodHead) && !strings.HasPrefix(r.URL.Path, "/api/") &&
		strings.Contains(r.Header.Get("Accept"), "text/html")
}

// authPage is the sign-in problem as a page, in English and Chinese (the
// page cannot know the user's choice: it is stored behind the token). It
// names the code and the next step like every error, and loads nothing.
var authPage = template.Must(template.New("auth").Parse(`<!doctype html>
<html lang="{{.Lang}}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>AgentHub: not signed in</title>
<style>
  :root { color-scheme: light dark; font: 15px/1.5 system-ui, sans-serif; }
  body { max-width: 42rem; margin: 12vh auto; padding: 0 1.5rem; }
  section { border: 1px solid color-mix(in srgb, #c0392b 35%, transparent); border-radius: 10px; padding: 1rem 1.25rem; margin-bottom: 1rem; }
  h1 { font-size: 1.15rem; margin: 0 0 .4rem; }
  p { margin: .3rem 0; }
  code { font: .9em ui-monospace, monospace; padding: 0 .3em; border-radius: 4px; background: color-mix(in srgb, currentColor 10%, transparent); }
  .muted { opacity: .75; }
</style>
</head>
<body data-code="unauthorized">
{{range .Parts}}<section lang="{{.Lang}}">
  <h1>{{.Title}}</h1>
  <p>{{.Cause}}</p>
  <p><strong>{{.NextLabel}}:</strong> {{.Next}} <code>agenthub serve</code></p>
  <p class="muted">{{.CodeLabel}}: <code>unauthorized</code></p>
</section>
{{end}}</body>
</html>
`))

type authPart struct{ Lang, Title, Cause, NextLabel, Next, CodeLabel string }

var (
	authEN = authPart{Lang: "en", Title: "This page is not signed in",
		Cause:     "The browser did not send the token of this AgentHub server, or the server restarted with a new one.",
		NextLabel: "Next step", Next: "Open the exact URL, with its token, that was printed by", CodeLabel: "Error code"}
	authZH = authPart{Lang: "zh-CN", Title: "此页面未登录",
		Cause:     "浏览器没有发送此 AgentHub 服务器的令牌，或服务器已用新令牌重新启动。",
		NextLabel: "下一步", Next: "打开以下命令打印的完整网址（含令牌）：", CodeLabel: "错误代码"}
)

// writeAuthPage answers an unauthorised page load: 401, the reader's
// language first (Accept-Language), the other one below.
func writeAuthPage(w http.ResponseWriter, r *http.Request) {
	parts, lang := []authPart{authEN, authZH}, "en"
	if strings.HasPrefix(strings.ToLower(r.Header.Get("Accept-Language")), "zh") {
		parts, lang = []authPart{authZH, authEN}, "zh-CN"
	}
	h := w.Header()
	h.Set("Content-Type", "text/html; charset=utf-8")
	h.Set("Content-Security-Policy", "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'")
	h.Set("Cache-Control", "no-store")
	h.Set("X-Content-Type-Options", "nosniff")
	w.WriteHeader(http.StatusUnauthorized)
	if err := authPage.Execute(w, struct {
		Lang  string
		Parts []authPart
	}{lang, parts}); err != nil {
		slog.Debug("write the sign-in page", "err", err)
	}
}
