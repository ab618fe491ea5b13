package httpapi

import (
	"net/http"

	"agenthub/app/api"
)

// conflictRoutes settles a run's workspace conflicts (docs/RELIABILITY.md).
func (s *Server) conflictRoutes(mux *http.ServeMux) {
	conflicts := api.NewConflictsAPI(s.core)
	mux.HandleFunc("POST /api/runs/{id}/conflicts/{intent}/resolve", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Choice string `json:"choice"` // keep | restore
		}
		if err := readJSON(r, &in); err != nil {
			writeError(w, err, 0)
			return
		}
		v, err := conflicts.Resolve(r.PathValue("id"), r.PathValue("intent"), in.Choice)
		reply(w, v, err)
	})
}
