package cli

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httputil"
	"net/url"

	"agenthub/app/api"
	"agenthub/app/engineclient"
	"agenthub/app/httpapi"
	"agenthub/backend"
)

// serveProxy is browser mode as a client of the engine: a loopback TCP
// listener with the token and browser guards, proxying every request,
// event streams included, to the engine's socket (started if none runs).
// Stopping it stops nothing but the listener: runs go on in the engine.
func serveProxy(ctx context.Context, e *Env, homeFlag, addr string) error {
	ln, err := httpapi.Listen(addr)
	if err != nil {
		return err
	}
	defer ln.Close()
	home, err := api.ResolveHome(homeFlag, e.Getenv)
	if err != nil {
		return err
	}
	c, err := ensureEngine(ctx, e, home)
	if err != nil {
		return err
	}
	token := httpapi.NewToken()
	target := &url.URL{Scheme: "http", Host: "engine"}
	proxy := &httputil.ReverseProxy{
		Rewrite: func(r *httputil.ProxyRequest) {
			r.SetURL(target)
			r.Out.Host = "engine"
			// The token stays here: the socket needs none.
			r.Out.Header.Del("Authorization")
			r.Out.Header.Del("Cookie")
		},
		Transport:     c.HTTP.Transport,
		FlushInterval: -1, // event streams flush every event
		ErrorHandler: func(w http.ResponseWriter, r *http.Request, err error) {
			w.Header().Set("Content-Type", "application/json")
			w.WriteHeader(http.StatusBadGateway)
			body := api.ErrorOf(&backend.Error{Code: backend.CodeEngineUnavailable, Err: err,
				Message: "the AgentHub engine does not answer", Next: "Start it again: agenthub engine start"})
			fmt.Fprintf(w, `{"code":%q,"message":%q,"next":%q}`, body.Code, body.Message, body.Next)
		},
	}
	// The browser reaches the API and the page; the engine's own routes
	// (status, stop, forwarded commands) stay on the socket.
	mux := http.NewServeMux()
	mux.Handle("/", proxy)
	mux.HandleFunc("/engine/", http.NotFound)
	fmt.Fprintf(e.Stdout, "AgentHub is serving on http://%s/?token=%s\n", ln.Addr().String(), token)
	fmt.Fprintf(e.Stdout, "Data directory: %s, run by its engine (%s). Press Ctrl+C to stop serving; runs go on.\n",
		api.DisplayPath(home), engineclient.SocketName)
	return httpapi.ServeHandler(ctx, ln, httpapi.Guard(token, mux))
}
