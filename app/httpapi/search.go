package httpapi

import (
	"log/slog"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"agenthub/app/api"
	"agenthub/backend"
)

// historyRoutes mirror api.SearchAPI and the run bundle (docs/API.md).
func (s *Server) historyRoutes(mux *http.ServeMux) {
	search := api.NewSearchAPI(s.core)
	mux.HandleFunc("GET /api/search", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		in := api.SearchRequest{Query: q.Get("q"), Workspace: q.Get("workspace"), Runtime: q.Get("runtime"),
			From: q.Get("from"), To: q.Get("to"), ChangedFile: q.Get("changedFile"), RunID: q.Get("runId"),
			NeedsApproval: q.Get("needsApproval") == "true" || q.Get("needsApproval") == "1"}
		if st := q.Get("status"); st != "" {
			in.Status = strings.Split(st, ",")
		}
		if l := q.Get("limit"); l != "" {
			n, err := strconv.Atoi(l)
			if err != nil {
				writeError(w, backend.Errorf(backend.CodeInvalidInput, "limit must be a whole number"), 0)
				return
			}
			in.Limit = n
		}
		v, err := search.Search(in)
		if v == nil {
			v = []api.SearchResult{}
		}
		reply(w, v, err)
	})
	mux.HandleFunc("GET /api/runs/page", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		before, err1 := parseInt(q.Get("before"))
		limit, err2 := parseInt(q.Get("limit"))
		if err1 != nil || err2 != nil {
			writeError(w, backend.Errorf(backend.CodeInvalidInput, "before and limit must be whole numbers"), 0)
			return
		}
		in := api.RunsPageRequest{Workspace: q.Get("workspace"), Before: before, Limit: int(limit)}
		if st := q.Get("status"); st != "" {
			in.Status = strings.Split(st, ",")
		}
		v, err := search.RunsPage(in)
		reply(w, v, err)
	})
	mux.HandleFunc("GET /api/runs/{id}/export", func(w http.ResponseWriter, r *http.Request) {
		id := r.PathValue("id")
		data, _, err := api.ExportRunBytes(s.core, id)
		if err != nil {
			writeError(w, err, 0)
			return
		}
		h := w.Header()
		h.Set("Content-Type", "application/zip")
		h.Set("Content-Disposition", mime.FormatMediaType("attachment",
			map[string]string{"filename": api.RunExportName(id)}))
		h.Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusOK)
		if _, err := w.Write(data); err != nil {
			slog.Debug("write the run bundle", "err", err)
		}
	})
}
