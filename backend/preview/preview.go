// Package preview turns an HTML artifact into a document that can be shown
// without reaching anything: no script runs, no resource loads, no link or
// form navigates, no refresh redirects. Three layers hold it, so that any
// one of them failing still leaves the others: this rewrite (scripts,
// frames, objects, <base>, <meta http-equiv>, <link>, event handlers and
// every URL-bearing attribute other than a fragment or an inline data:
// image are removed), the Content-Security-Policy it prepends (and the HTTP
// route sends as a header, with sandbox), and the viewer's sandboxed frame
// (no allow-scripts, no allow-same-origin).
package preview

import (
	"bytes"
	"strings"

	"golang.org/x/net/html"
)

// CSP is the policy of a previewed page: nothing but inline styles and
// data: images.
const CSP = "default-src 'none'; img-src data:; style-src 'unsafe-inline'; font-src 'none'; " +
	"form-action 'none'; base-uri 'none'"

// HeaderCSP is CSP as an HTTP header adds it: the page is also sandboxed
// (an opaque origin, no scripts) when opened outside the viewer's frame.
const HeaderCSP = CSP + "; frame-ancestors 'self'; sandbox"

// dropped elements are removed with everything inside them.
var dropped = map[string]bool{"script": true, "iframe": true, "frame": true, "frameset": true, "object": true,
	"embed": true, "applet": true, "base": true, "link": true, "meta": true, "portal": true, "template": true,
	"noscript": true, "noembed": true, "noframes": true}

// urlAttrs name a URL (or a list of them) the browser may fetch or navigate to.
var urlAttrs = map[string]bool{"href": true, "src": true, "srcset": true, "action": true, "formaction": true,
	"poster": true, "ping": true, "background": true, "cite": true, "data": true, "codebase": true,
	"longdesc": true, "usemap": true, "xlink:href": true, "manifest": true, "lowsrc": true, "dynsrc": true,
	"imagesrcset": true, "attributionsrc": true}

// HTML returns src rewritten for a preview, the CSP meta first.
func HTML(src []byte) []byte {
	var out bytes.Buffer
	out.WriteString(`<!doctype html><meta http-equiv="Content-Security-Policy" content="` + CSP + `">` +
		`<meta name="referrer" content="no-referrer">`)
	z := html.NewTokenizer(bytes.NewReader(src))
	skip := 0 // depth inside a dropped element
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			break
		}
		raw := string(z.Raw()) // before Token, which may reuse its buffer
		tok := z.Token()
		name := strings.ToLower(tok.Data)
		switch tt {
		case html.StartTagToken, html.SelfClosingTagToken:
			if dropped[name] {
				if tt == html.StartTagToken && !void(name) {
					skip++
				}
				continue
			}
			if skip > 0 {
				continue
			}
			tok.Attr = safeAttrs(name, tok.Attr)
			out.WriteString(tok.String())
		case html.EndTagToken:
			if dropped[name] && !void(name) {
				if skip > 0 {
					skip--
				}
				continue
			}
			if skip == 0 {
				out.WriteString(tok.String())
			}
		case html.TextToken:
			// Raw: the tokenizer already knows where text is (a <style>'s
			// CSS must stay unescaped); the CSP confines what CSS can load.
			if skip == 0 {
				out.WriteString(raw)
			}
		default:
			// Our doctype comes first; comments (old conditional ones
			// included) are dropped.
		}
	}
	return out.Bytes()
}

// void elements have no end tag; a dropped one must not open a skip.
func void(name string) bool {
	switch name {
	case "base", "link", "meta", "embed", "frame":
		return true
	}
	return false
}

// safeAttrs drops event handlers, style attributes that load URLs, and
// every URL-bearing attribute except a fragment link or an inline image.
func safeAttrs(elem string, attrs []html.Attribute) []html.Attribute {
	out := attrs[:0]
	for _, a := range attrs {
		k := strings.ToLower(a.Key)
		if a.Namespace != "" {
			k = strings.ToLower(a.Namespace) + ":" + k
		}
		v := strings.TrimSpace(a.Val)
		switch {
		case strings.HasPrefix(k, "on"):
			continue
		case k == "style" && strings.Contains(strings.ToLower(v), "url("):
			continue
		case k == "http-equiv" || k == "target" || k == "download":
			continue
		case urlAttrs[k]:
			if !inline(elem, k, v) {
				continue
			}
		}
		out = append(out, a)
	}
	return out
}

// inline reports whether a URL attribute stays inside the document: a
// fragment link, or an image's data: URL.
func inline(elem, attr, v string) bool {
	if attr == "href" && strings.HasPrefix(v, "#") {
		return true
	}
	lv := strings.ToLower(v)
	return attr == "src" && elem == "img" && strings.HasPrefix(lv, "data:image/") && !strings.HasPrefix(lv, "data:image/svg")
}
