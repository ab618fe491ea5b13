package httpapi

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/hex"
	"net"
	"net/http"
	"net/url"
	"strings"

	"agenthub/backend"
)

// CookieName carries the token after the first page load.
const CookieName = "agenthub_token"

// NewToken returns 32 random bytes in hex.
func NewToken() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}

// tokenOf extracts the token a request presents, from the Authorization
// header, the cookie, or the token query parameter (EventSource cannot set
// headers, and the first page load carries it in the URL).
func tokenOf(r *http.Request) string {
	if h := r.Header.Get("Authorization"); strings.HasPrefix(h, "Bearer ") {
		return strings.TrimPrefix(h, "Bearer ")
	}
	if c, err := r.Cookie(CookieName); err == nil {
		return c.Value
	}
	return r.URL.Query().Get("token")
}

func (s *Server) authorized(r *http.Request) bool {
	got := tokenOf(r)
	return got != "" && subtle.ConstantTimeCompare([]byte(got), []byte(s.token)) == 1
}

// sameOrigin refuses requests a web page on another origin could forge: a
// browser always sends Origin on cross-origin fetches and Sec-Fetch-Site on
// navigations and subresources.
func sameOrigin(r *http.Request) bool {
	if site := r.Header.Get("Sec-Fetch-Site"); site == "cross-site" || site == "same-site" {
		return false
	}
	origin := r.Header.Get("Origin")
	if origin == "" {
		return true
	}
	u, err := url.Parse(origin)
	return err == nil && u.Host == r.Host
}

// loopbackHost refuses DNS-rebinding: the Host header must name loopback.
func loopbackHost(r *http.Request) bool {
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	host = strings.Trim(host, "[]")
	if host == "localhost" {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// guard wraps the whole handler: origin first, then the token. The token in
// the URL of the first page load is turned into a strict cookie.
func (s *Server) guard(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !sameOrigin(r) || !loopbackHost(r) {
			writeError(w, &backend.Error{Code: backend.FailPermissionDenied,
				Message: "cross-origin requests are refused",
				Next:    "Open AgentHub from the URL that `agenthub serve` printed; other sites may not call it."}, http.StatusForbidden)
			return
		}
		if !s.authorized(r) && wantsPage(r) {
			writeAuthPage(w, r) // authpage.go: a browser gets a page, not JSON
			return
		}
		if !s.authorized(r) {
			writeError(w, &backend.Error{Code: backend.CodeUnauthorized,
				Message: "this AgentHub server needs its token"}, http.StatusUnauthorized)
			return
		}
		if r.URL.Query().Get("token") != "" && !strings.HasPrefix(r.URL.Path, "/api/") {
			http.SetCookie(w, &http.Cookie{Name: CookieName, Value: s.token, Path: "/",
				HttpOnly: true, SameSite: http.SameSiteStrictMode})
		}
		w.Header().Set("X-Content-Type-Options", "nosniff")
		w.Header().Set("Referrer-Policy", "no-referrer")
		next.ServeHTTP(w, r)
	})
}
