package httpapi

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"syscall"
	"time"

	"agenthub/app/api"
	"agenthub/backend"
	"agenthub/backend/redact"
)

// Server serves the facades, the event streams and the frontend.
type Server struct {
	core   *api.Core
	token  string
	assets fs.FS
	events EventSource

	system     *api.SystemAPI
	workspaces *api.WorkspacesAPI
	settings   *api.SettingsAPI
	runs       *api.RunsAPI
	approvals  *api.ApprovalsAPI
	audit      *api.AuditAPI
}

// New builds a server over core; assets is the built frontend (dist).
func New(core *api.Core, assets fs.FS, events EventSource, token string) *Server {
	redact.Register(token) // a model or a command that prints it is masked
	return &Server{
		core: core, token: token, assets: assets, events: events,
		system: api.NewSystemAPI(core), workspaces: api.NewWorkspacesAPI(core), settings: api.NewSettingsAPI(core),
		runs: api.NewRunsAPI(core), approvals: api.NewApprovalsAPI(core), audit: api.NewAuditAPI(core),
	}
}

// Token is the per-start secret carried in the printed URL.
func (s *Server) Token() string { return s.token }

// Handler returns the guarded handler with every route.
func (s *Server) Handler() http.Handler { return s.guard(s.routes()) }

// routes is every route, unguarded.
func (s *Server) routes() http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /api/info", func(w http.ResponseWriter, r *http.Request) {
		v, err := s.system.Info()
		reply(w, v, err)
	})
	mux.HandleFunc("GET /api/local-models", func(w http.ResponseWriter, r *http.Request) {
		v, err := s.system.LocalModels()
		reply(w, v, err)
	})
	s.workspaceRoutes(mux)
	s.settingsRoutes(mux)
	s.runRoutes(mux)
	s.auditRoutes(mux)
	s.reviewRoutes(mux)
	s.worktreeRoutes(mux) // worktrees.go
	s.artifactRoutes(mux) // artifacts.go
	s.changeRoutes(mux)   // changes.go
	s.conflictRoutes(mux) // conflicts.go: workspace conflicts (issue 15)
	s.streamRoutes(mux)
	s.aguiRoutes(mux)  // agui.go: AG-UI
	s.aisdkRoutes(mux) // aisdk.go: the AI SDK v6 UI message stream
	mux.HandleFunc("/api/", func(w http.ResponseWriter, r *http.Request) {
		writeError(w, backend.Errorf(backend.CodeNotFound, "no API route %s %s", r.Method, r.URL.Path), http.StatusNotFound)
	})
	mux.Handle("/", s.static())
	return mux
}

// Listen binds addr, which must be a loopback address; a port in use gets
// a clear error.
func Listen(addr string) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, backend.Errorf(backend.CodeInvalidInput, "--addr %q is not HOST:PORT (for example 127.0.0.1:8080)", addr)
	}
	if ip := net.ParseIP(host); host != "localhost" && (ip == nil || !ip.IsLoopback()) {
		return nil, backend.Errorf(backend.CodeInvalidInput, "--addr %q is not a loopback address: AgentHub serves only on 127.0.0.1, ::1 or localhost", addr)
	}
	ln, err := net.Listen("tcp", addr)
	if errors.Is(err, syscall.EADDRINUSE) {
		return nil, &backend.Error{Code: backend.CodeConflict, Err: err,
			Message: fmt.Sprintf("port in use: something else already listens on %s", addr),
			Next:    "Pick another port with --addr 127.0.0.1:PORT, or port 0 for any free one."}
	}
	if err != nil {
		return nil, fmt.Errorf("listen on %s: %w", addr, err)
	}
	return ln, nil
}

// Serve runs until ctx ends, then shuts down gracefully.
func (s *Server) Serve(ctx context.Context, ln net.Listener) error {
	return ServeHandler(ctx, ln, s.Handler())
}

// ServeHandler serves h on ln until ctx ends, then shuts down gracefully
// (browser mode, and `agenthub serve` in front of the engine).
func ServeHandler(ctx context.Context, ln net.Listener, h http.Handler) error {
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
	done := make(chan error, 1)
	go func() { done <- srv.Serve(ln) }()
	select {
	case err := <-done:
		return err
	case <-ctx.Done():
		shut, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shut)
		return nil
	}
}

// URL is what `agenthub serve` prints for the user to open.
func (s *Server) URL(ln net.Listener) string {
	return fmt.Sprintf("http://%s/?token=%s", ln.Addr().String(), s.token)
}
