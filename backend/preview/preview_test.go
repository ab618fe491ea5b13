package preview

import (
	"strings"
	"testing"
)

// TestHTMLRemovesEveryWayOut: each way a page could load, run or navigate
// is gone from the rewrite, what is harmless stays, and the CSP meta comes
// first (before anything it governs).
func TestHTMLRemovesEveryWayOut(t *testing.T) {
	const host = "127.0.0.1:9"
	cases := []struct{ name, in, keep string }{
		{"script", `<p>a</p><script>fetch("http://` + host + `")</script>`, "<p>a</p>"},
		{"script src", `<script src="http://` + host + `/x.js"></script><b>b</b>`, "<b>b</b>"},
		{"img", `<img src="http://` + host + `/i.png" alt="i">`, `<img alt="i">`},
		{"img srcset", `<img srcset="http://` + host + `/i.png 2x">`, "<img>"},
		{"handler", `<body onload="x()"><div onclick="y()">d</div></body>`, "<div>d</div>"},
		{"link", `<link rel="stylesheet" href="http://` + host + `/s.css"><i>i</i>`, "<i>i</i>"},
		{"dns prefetch", `<link rel="dns-prefetch" href="//` + host + `">`, ""},
		{"meta refresh", `<meta http-equiv="refresh" content="0;url=http://` + host + `/">x`, "x"},
		{"base", `<base href="http://` + host + `/"><a href="p">p</a>`, "<a>p</a>"},
		{"anchor", `<a href="http://` + host + `/" target="_top" ping="http://` + host + `">go</a>`, "<a>go</a>"},
		{"fragment", `<a href="#top">top</a>`, `<a href="#top">top</a>`},
		{"iframe", `<iframe src="http://` + host + `/"></iframe>ok`, "ok"},
		{"object", `<object data="http://` + host + `/"></object><embed src="http://` + host + `/">ok`, "ok"},
		{"form", `<form action="http://` + host + `/"><button formaction="http://` + host + `/">b</button></form>`, "<button>b</button>"},
		{"style url", `<div style="background:url(http://` + host + `/)">s</div>`, "<div>s</div>"},
		{"svg image", `<svg><image href="http://` + host + `/"/><image xlink:href="http://` + host + `/"/></svg>`, "<svg>"},
		{"noscript", `<noscript><img src="http://` + host + `/n.png"></noscript>ok`, "ok"},
		{"video", `<video poster="http://` + host + `/p.png" src="http://` + host + `/v.mp4"></video>`, "<video></video>"},
		{"data image", `<img src="data:image/png;base64,iVBORw0KGgo=">`, `<img src="data:image/png;base64,iVBORw0KGgo="/>`},
		{"svg data image", `<img src="data:image/svg+xml,<svg onload=alert(1)>">`, "<img/>"},
		{"style element", `<style>p > b { color: red }</style>`, "p > b { color: red }"},
		{"comment", `<!--[if IE]><img src="http://` + host + `/"><![endif]-->c`, "c"},
	}
	for _, c := range cases {
		got := string(HTML([]byte(c.in)))
		if !strings.HasPrefix(got, `<!doctype html><meta http-equiv="Content-Security-Policy" content="`+CSP+`">`) {
			t.Errorf("%s: the CSP is not first:\n%s", c.name, got)
		}
		body := got[strings.Index(got, `no-referrer">`)+len(`no-referrer">`):]
		for _, bad := range []string{host, "<script", "onload", "onclick", "<iframe", "<object", "<embed", "<base",
			"<meta", "<link", "target=", "ping=", "action=", "url("} {
			if strings.Contains(strings.ToLower(body), bad) {
				t.Errorf("%s: %q survived:\n%s", c.name, bad, body)
			}
		}
		if norm(body) != "" && c.keep != "" && !strings.Contains(norm(body), norm(c.keep)) {
			t.Errorf("%s: %q lost:\n%s", c.name, c.keep, body)
		}
	}
}

// norm ignores the tokenizer's self-closing spelling.
func norm(s string) string { return strings.ReplaceAll(strings.ReplaceAll(s, "/>", ">"), " >", ">") }
