package httpapi

import (
	"strings"
	"testing"
)

// TestWrongTokenInABrowserIsAPage: a browser opening the page with a wrong
// or no token gets a 401 page in its language that says what to do, not raw
// JSON; the API keeps answering JSON.
func TestWrongTokenInABrowserIsAPage(t *testing.T) {
	f := start(t)
	page := map[string]string{"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"}
	for _, path := range []string{"/?token=wrong", "/", "/runs/x"} {
		code, body, hdr := f.do(t, "GET", path, "", page)
		if code != 401 || !strings.HasPrefix(hdr.Get("Content-Type"), "text/html") {
			t.Fatalf("%s: %d %s", path, code, hdr.Get("Content-Type"))
		}
		for _, want := range []string{"This page is not signed in", "<code>agenthub serve</code>", "<code>unauthorized</code>", "此页面未登录"} {
			if !strings.Contains(body, want) {
				t.Fatalf("%s: the page lacks %q:\n%s", path, want, body)
			}
		}
		if strings.Contains(body, `"code"`) || strings.Contains(body, f.token) {
			t.Fatalf("%s: the page shows JSON or the token:\n%s", path, body)
		}
		if hdr.Get("Set-Cookie") != "" {
			t.Fatalf("%s: a refused page set a cookie", path)
		}
	}
	zh := map[string]string{"Accept": "text/html", "Accept-Language": "zh-CN,zh;q=0.9,en;q=0.5"}
	if _, body, _ := f.do(t, "GET", "/", "", zh); strings.Index(body, "此页面未登录") > strings.Index(body, "This page is not signed in") {
		t.Fatalf("a Chinese browser gets English first:\n%s", body)
	}
	// The API still answers JSON, even to a browser's Accept.
	if code, body, _ := f.do(t, "GET", "/api/workspaces", "", page); code != 401 || !strings.Contains(body, `"code":"unauthorized"`) {
		t.Fatalf("api: %d %s", code, body)
	}
	// The right token still opens the app.
	if code, body, _ := f.do(t, "GET", "/?token="+f.token, "", page); code != 200 || !strings.Contains(body, "<title>AgentHub</title>") {
		t.Fatalf("with the token: %d %s", code, body)
	}
}
