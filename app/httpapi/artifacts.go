package httpapi

import (
	"log/slog"
	"mime"
	"net/http"
	"strconv"

	"agenthub/app/api"
	"agenthub/backend"
	"agenthub/backend/preview"
)

// artifactRoutes mirror api.ArtifactsAPI (docs/API.md#artifacts). Bytes an
// agent produced are never served as an active page of this origin: the
// content route sends them as a download or as an inert image or text,
// under a CSP that sandboxes them; only the preview route renders HTML, and
// only the rewritten page (backend/preview) under the preview CSP with
// sandbox, so that it has an opaque origin and can neither run a script nor
// reach this API or the network.
func (s *Server) artifactRoutes(mux *http.ServeMux) {
	arts := api.NewArtifactsAPI(s.core)
	mux.HandleFunc("GET /api/artifacts", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		in := api.ArtifactQuery{RunID: q.Get("runId"), WorkspaceID: q.Get("workspaceId"), Kind: q.Get("kind"),
			From: q.Get("from"), To: q.Get("to")}
		if l := q.Get("limit"); l != "" {
			n, err := strconv.Atoi(l)
			if err != nil {
				writeError(w, backend.Errorf(backend.CodeInvalidInput, "limit must be a whole number"), 0)
				return
			}
			in.Limit = n
		}
		v, err := arts.List(in)
		reply(w, v, err)
	})
	mux.HandleFunc("GET /api/artifacts/{id}", func(w http.ResponseWriter, r *http.Request) {
		v, err := arts.Get(r.PathValue("id"))
		reply(w, v, err)
	})
	mux.HandleFunc("GET /api/artifacts/{id}/content", func(w http.ResponseWriter, r *http.Request) {
		a, data, err := api.ArtifactBytes(s.core, r.PathValue("id"))
		if err == nil {
			err = api.Shareable(a) // a screenshot leaves only after its privacy review
		}
		if err != nil {
			writeError(w, err, 0)
			return
		}
		h := w.Header()
		h.Set("Content-Security-Policy", "default-src 'none'; img-src 'self' data:; sandbox")
		h.Set("Cache-Control", "no-store")
		switch {
		case a.Kind == backend.ArtifactImage || a.Kind == backend.ArtifactScreenshot:
			h.Set("Content-Type", a.MediaType) // sniffed from magic bytes when stored: never SVG or HTML
		case a.Kind.Text():
			h.Set("Content-Type", "text/plain; charset=utf-8")
		default:
			h.Set("Content-Type", "application/octet-stream")
		}
		disp := "inline"
		if r.URL.Query().Get("download") != "" || !(a.Kind == backend.ArtifactImage || a.Kind == backend.ArtifactScreenshot) {
			disp = "attachment"
		}
		h.Set("Content-Disposition", mime.FormatMediaType(disp, map[string]string{"filename": api.ArtifactFileName(a)}))
		w.WriteHeader(http.StatusOK)
		if _, err := w.Write(data); err != nil {
			slog.Debug("write an artifact", "err", err)
		}
	})
	mux.HandleFunc("POST /api/artifacts/{id}/review", func(w http.ResponseWriter, r *http.Request) {
		v, err := arts.Review(r.PathValue("id"))
		reply(w, v, err)
	})
	mux.HandleFunc("GET /api/artifacts/{id}/preview", func(w http.ResponseWriter, r *http.Request) {
		a, data, err := api.ArtifactBytes(s.core, r.PathValue("id"))
		if err == nil && a.Kind != backend.ArtifactHTML {
			err = backend.Errorf(backend.CodeInvalidInput, "artifact %s is a %s; only HTML artifacts have a preview", a.ID, a.Kind)
		}
		if err != nil {
			writeError(w, err, 0)
			return
		}
		h := w.Header()
		h.Set("Content-Security-Policy", preview.HeaderCSP)
		h.Set("Content-Type", "text/html; charset=utf-8")
		h.Set("Cache-Control", "no-store")
		h.Set("Cross-Origin-Resource-Policy", "same-origin")
		w.WriteHeader(http.StatusOK)
		if _, err := w.Write(preview.HTML(data)); err != nil {
			slog.Debug("write an artifact preview", "err", err)
		}
	})
}
