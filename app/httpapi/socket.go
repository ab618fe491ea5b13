package httpapi

import "net/http"

// SocketHandler is every route without the browser guard, for the engine's
// Unix socket: its mode (0600) and the peer's uid, checked on every
// connection (app/engined), stand for the token, and no browser can reach
// a Unix socket to forge a cross-origin request.
func (s *Server) SocketHandler() http.Handler { return s.routes() }

// Guard wraps next in browser mode's checks (loopback Host, same origin, the
// token): `agenthub serve` puts it in front of its proxy to the engine.
func Guard(token string, next http.Handler) http.Handler {
	return (&Server{token: token}).guard(next)
}
