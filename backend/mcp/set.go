package mcp

import (
	"context"
	"log/slog"
	"slices"
	"sync"

	sdk "github.com/modelcontextprotocol/go-sdk/mcp"

	"agenthub/backend"
)

// Set is the MCP servers of one profile. It implements the engine's
// ToolSource: servers start on first use, in parallel, and a server that
// cannot start offers no tools (and is retried later). Safe for concurrent
// use.
type Set struct {
	servers []*server
	log     *slog.Logger

	mu    sync.Mutex
	tools map[*server][]backend.Tool // built from each server's last listing
	defs  map[*server][]*sdk.Tool    // the listing they were built from
}

// NewSet returns the servers of cfgs; nothing starts until [Set.Tools].
func NewSet(cfgs []Config, log *slog.Logger) *Set {
	if log == nil {
		log = slog.Default()
	}
	s := &Set{log: log, tools: map[*server][]backend.Tool{}, defs: map[*server][]*sdk.Tool{}}
	for _, c := range cfgs {
		s.servers = append(s.servers, &server{cfg: c, log: log})
	}
	return s
}

// Tools returns the tools of every server that is running or could be
// started now, in configuration order.
func (s *Set) Tools(ctx context.Context) []backend.Tool {
	var wg sync.WaitGroup
	for _, srv := range s.servers {
		wg.Go(func() { _, _ = srv.live(ctx) }) // a failed start is logged once, by the server
	}
	wg.Wait()
	var out []backend.Tool
	for _, srv := range s.servers {
		out = append(out, s.toolsOf(srv)...)
	}
	return out
}

// toolsOf adapts a server's listed tools once per listing; a tool whose
// name or schema is unusable is skipped with a warning.
func (s *Set) toolsOf(srv *server) []backend.Tool {
	defs := srv.listed()
	s.mu.Lock()
	defer s.mu.Unlock()
	if ts, ok := s.tools[srv]; ok && slices.Equal(s.defs[srv], defs) {
		return ts
	}
	var ts []backend.Tool
	for _, d := range defs {
		t, err := newTool(srv, d)
		if err != nil {
			s.log.Warn("skip an mcp tool", "server", srv.cfg.Name, "err", err)
			continue
		}
		ts = append(ts, t)
	}
	s.tools[srv], s.defs[srv] = ts, defs
	return ts
}

// Close stops every server; nothing starts again.
func (s *Set) Close() {
	for _, srv := range s.servers {
		srv.close()
	}
}
