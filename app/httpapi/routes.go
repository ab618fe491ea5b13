package httpapi

import (
	"net/http"

	"agenthub/app/api"
)

func (s *Server) workspaceRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /api/workspaces", func(w http.ResponseWriter, r *http.Request) {
		v, err := s.workspaces.List()
		reply(w, v, err)
	})
	mux.HandleFunc("POST /api/workspaces", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Path string `json:"path"`
		}
		if err := readJSON(r, &in); err != nil {
			writeError(w, err, 0)
			return
		}
		v, err := s.workspaces.Add(in.Path)
		reply(w, v, err)
	})
	mux.HandleFunc("POST /api/workspaces/{id}/undo", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			CheckpointID string `json:"checkpointId"`
		}
		if err := readJSON(r, &in); err != nil {
			writeError(w, err, 0)
			return
		}
		v, err := s.workspaces.Undo(r.PathValue("id"), in.CheckpointID)
		reply(w, v, err)
	})
	mux.HandleFunc("DELETE /api/workspaces/{id}", func(w http.ResponseWriter, r *http.Request) {
		err := s.workspaces.Remove(r.PathValue("id"))
		reply(w, struct{}{}, err)
	})
	s.historyRoutes(mux) // search.go: search and run bundles
}

func (s *Server) settingsRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /api/settings", func(w http.ResponseWriter, r *http.Request) {
		v, err := s.settings.Get()
		reply(w, v, err)
	})
	mux.HandleFunc("PUT /api/settings", func(w http.ResponseWriter, r *http.Request) {
		var in api.Settings
		if err := readJSON(r, &in); err != nil {
			writeError(w, err, 0)
			return
		}
		v, err := s.settings.Set(in)
		reply(w, v, err)
	})
}
