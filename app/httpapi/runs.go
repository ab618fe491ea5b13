package httpapi

import (
	"net/http"
	"strconv"

	"agenthub/app/api"
	"agenthub/backend"
)

// runRoutes mirror api.RunsAPI and api.ApprovalsAPI (docs/API.md).
func (s *Server) runRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /api/runs", func(w http.ResponseWriter, r *http.Request) {
		v, err := s.runs.List(r.URL.Query().Get("workspaceId"))
		reply(w, v, err)
	})
	mux.HandleFunc("POST /api/runs", func(w http.ResponseWriter, r *http.Request) {
		var in api.StartRun
		if err := readJSON(r, &in); err != nil {
			writeError(w, err, 0)
			return
		}
		v, err := s.runs.Start(in)
		reply(w, v, err)
	})
	mux.HandleFunc("GET /api/runs/{id}", func(w http.ResponseWriter, r *http.Request) {
		v, err := s.runs.Get(r.PathValue("id"))
		reply(w, v, err)
	})
	mux.HandleFunc("GET /api/runs/{id}/events", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		after, err1 := parseInt(q.Get("after"))
		limit, err2 := parseInt(q.Get("limit"))
		if err1 != nil || err2 != nil {
			writeError(w, backend.Errorf(backend.CodeInvalidInput, "after and limit must be whole numbers"), 0)
			return
		}
		v, err := s.runs.Events(r.PathValue("id"), after, int(limit))
		reply(w, v, err)
	})
	mux.HandleFunc("POST /api/runs/{id}/cancel", func(w http.ResponseWriter, r *http.Request) {
		v, err := s.runs.Cancel(r.PathValue("id"))
		reply(w, v, err)
	})
	mux.HandleFunc("POST /api/runs/{id}/resume", func(w http.ResponseWriter, r *http.Request) {
		v, err := s.runs.Resume(r.PathValue("id"))
		reply(w, v, err)
	})
	mux.HandleFunc("GET /api/profiles", func(w http.ResponseWriter, r *http.Request) {
		v, err := s.runs.Profiles()
		reply(w, v, err)
	})
	mux.HandleFunc("GET /api/profiles/problems", func(w http.ResponseWriter, r *http.Request) {
		v, err := s.runs.ProfileProblems()
		reply(w, v, err)
	})
	mux.HandleFunc("GET /api/approvals", func(w http.ResponseWriter, r *http.Request) {
		v, err := s.approvals.ForRun(r.URL.Query().Get("runId"))
		reply(w, v, err)
	})
	mux.HandleFunc("POST /api/approvals/{id}/decide", func(w http.ResponseWriter, r *http.Request) {
		var d backend.Decision
		if err := readJSON(r, &d); err != nil {
			writeError(w, err, 0)
			return
		}
		d.ApprovalID = r.PathValue("id")
		v, err := s.approvals.Decide(d)
		reply(w, v, err)
	})
}

// auditRoutes mirror api.AuditAPI.
func (s *Server) auditRoutes(mux *http.ServeMux) {
	mux.HandleFunc("GET /api/audit", func(w http.ResponseWriter, r *http.Request) {
		q := r.URL.Query()
		v, err := s.audit.List(api.AuditFilter{RunID: q.Get("runId"), Actor: q.Get("actor"), Kind: q.Get("kind")})
		reply(w, v, err)
	})
	mux.HandleFunc("GET /api/audit/verify", func(w http.ResponseWriter, r *http.Request) {
		v, err := s.audit.Verify()
		reply(w, v, err)
	})
}

func parseInt(v string) (int64, error) {
	if v == "" {
		return 0, nil
	}
	return strconv.ParseInt(v, 10, 64)
}
