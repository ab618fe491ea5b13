package httpapi

import (
	"net/http"

	"agenthub/app/api"
)

// changeRoutes serve a run's change set (issue 18): the changes it proposed
// and applied with their states and diffs, line comments on them, and the
// revert of one applied change or of the whole run.
func (s *Server) changeRoutes(mux *http.ServeMux) {
	changes := api.NewChangesAPI(s.core)
	mux.HandleFunc("GET /api/runs/{id}/changes", func(w http.ResponseWriter, r *http.Request) {
		v, err := changes.Get(r.PathValue("id"))
		reply(w, v, err)
	})
	mux.HandleFunc("POST /api/runs/{id}/comments", func(w http.ResponseWriter, r *http.Request) {
		var in api.CommentInput
		if err := readJSON(r, &in); err != nil {
			writeError(w, err, 0)
			return
		}
		in.RunID = r.PathValue("id")
		v, err := changes.Comment(in)
		reply(w, v, err)
	})
	// An empty checkpointId reverts every applied change of the run.
	mux.HandleFunc("POST /api/runs/{id}/revert", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			CheckpointID string `json:"checkpointId"`
		}
		if err := readJSON(r, &in); err != nil {
			writeError(w, err, 0)
			return
		}
		v, err := changes.Revert(r.PathValue("id"), in.CheckpointID)
		reply(w, v, err)
	})
}
