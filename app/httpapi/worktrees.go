package httpapi

import (
	"net/http"

	"agenthub/app/api"
	"agenthub/workspace/worktree"
)

// worktreeRoutes serve the worktrees of worktree runs: their state, the
// merge back into the checkout (plan, then the approved merge bound to the
// plan's token), keep, discard (confirmed by the token of the unsaved work
// listed) and push (the plan shown, posted back: the push is bound to it).
func (s *Server) worktreeRoutes(mux *http.ServeMux) {
	wts := api.NewWorktreesAPI(s.core)
	mux.HandleFunc("GET /api/worktrees", func(w http.ResponseWriter, r *http.Request) {
		v, err := wts.List(r.URL.Query().Get("workspaceId"))
		reply(w, v, err)
	})
	mux.HandleFunc("PUT /api/workspaces/{id}/isolation", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Isolation string `json:"isolation"`
		}
		if err := readJSON(r, &in); err != nil {
			writeError(w, err, 0)
			return
		}
		reply(w, in, wts.SetDefaultIsolation(r.PathValue("id"), in.Isolation))
	})
	mux.HandleFunc("GET /api/runs/{id}/worktree", func(w http.ResponseWriter, r *http.Request) {
		v, err := wts.Get(r.PathValue("id"))
		reply(w, v, err)
	})
	mux.HandleFunc("GET /api/runs/{id}/worktree/merge", func(w http.ResponseWriter, r *http.Request) {
		v, err := wts.MergePlan(r.PathValue("id"))
		reply(w, v, err)
	})
	mux.HandleFunc("POST /api/runs/{id}/worktree/merge", func(w http.ResponseWriter, r *http.Request) {
		var in api.MergeRequest
		if err := readJSON(r, &in); err != nil {
			writeError(w, err, 0)
			return
		}
		v, err := wts.Merge(r.PathValue("id"), in)
		reply(w, v, err)
	})
	mux.HandleFunc("POST /api/runs/{id}/worktree/keep", func(w http.ResponseWriter, r *http.Request) {
		v, err := wts.Keep(r.PathValue("id"))
		reply(w, v, err)
	})
	mux.HandleFunc("POST /api/runs/{id}/worktree/discard", func(w http.ResponseWriter, r *http.Request) {
		var in struct {
			Confirm string `json:"confirm"`
		}
		if err := readJSON(r, &in); err != nil {
			writeError(w, err, 0)
			return
		}
		v, err := wts.Discard(r.PathValue("id"), in.Confirm)
		reply(w, v, err)
	})
	mux.HandleFunc("GET /api/runs/{id}/worktree/push", func(w http.ResponseWriter, r *http.Request) {
		remote := r.URL.Query().Get("remote")
		if remote == "" {
			remote = "origin"
		}
		v, err := wts.PlanPush(r.PathValue("id"), remote)
		reply(w, v, err)
	})
	mux.HandleFunc("POST /api/runs/{id}/worktree/push", func(w http.ResponseWriter, r *http.Request) {
		var in worktree.PushPlan
		if err := readJSON(r, &in); err != nil {
			writeError(w, err, 0)
			return
		}
		v, err := wts.Push(r.PathValue("id"), in)
		reply(w, v, err)
	})
}
