package httpapi

import (
	"io/fs"
	"net/http"
	"path"
	"strings"
)

// static serves the built frontend; unknown non-file paths get index.html so
// that client-side routes survive a reload.
func (s *Server) static() http.Handler {
	files := http.FileServerFS(s.assets)
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		name := strings.TrimPrefix(path.Clean(r.URL.Path), "/")
		if name == "" || name == "." {
			s.serveIndex(w, r)
			return
		}
		if _, err := fs.Stat(s.assets, name); err != nil {
			if path.Ext(name) != "" {
				http.NotFound(w, r)
				return
			}
			s.serveIndex(w, r)
			return
		}
		w.Header().Set("Cache-Control", "no-cache")
		files.ServeHTTP(w, r)
	})
}

func (s *Server) serveIndex(w http.ResponseWriter, r *http.Request) {
	page, err := fs.ReadFile(s.assets, "index.html")
	if err != nil {
		http.Error(w, "the frontend is not built: run `make build`", http.StatusServiceUnavailable)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Content-Security-Policy", "default-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; connect-src 'self'; frame-ancestors 'none'")
	_, _ = w.Write(page)
}
