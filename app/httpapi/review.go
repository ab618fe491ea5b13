package httpapi

import (
	"log/slog"
	"mime"
	"net/http"
	"time"

	"agenthub/app/api"
)

// reviewRoutes serve the settings and audit views' extra reads: a
// workspace's effective policy (api.PolicyAPI) and the audit export as a
// download (the window saves the same bytes through api.AuditFileAPI).
func (s *Server) reviewRoutes(mux *http.ServeMux) {
	policy := api.NewPolicyAPI(s.core)
	mux.HandleFunc("GET /api/workspaces/{id}/policy", func(w http.ResponseWriter, r *http.Request) {
		v, err := policy.Get(r.PathValue("id"))
		reply(w, v, err)
	})
	// Revoke one rule by the key the policy view lists (issue 21).
	mux.HandleFunc("DELETE /api/workspaces/{id}/policy/rules/{key}", func(w http.ResponseWriter, r *http.Request) {
		v, err := policy.Revoke(r.PathValue("id"), r.PathValue("key"))
		reply(w, v, err)
	})
	mux.HandleFunc("GET /api/audit/export", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query() // the view's active filters: the export follows them
		data, _, _, err := api.AuditExportBytes(s.audit, api.AuditFilter{RunID: q.Get("runId"), Actor: q.Get("actor"),
			Kind: q.Get("kind"), WorkspaceID: q.Get("workspaceId"), From: q.Get("from"), To: q.Get("to")})
		if err != nil {
			writeError(w, err, 0)
			return
		}
		h := w.Header()
		h.Set("Content-Type", "application/x-ndjson; charset=utf-8")
		h.Set("Content-Disposition", mime.FormatMediaType("attachment",
			map[string]string{"filename": api.AuditExportName(time.Now())}))
		h.Set("Cache-Control", "no-store")
		w.WriteHeader(http.StatusOK)
		if _, err := w.Write(data); err != nil {
			slog.Debug("write the audit export", "err", err)
		}
	})
}
