package app

import (
	"context"
	"log/slog"
	"sync"
	"time"

	"agenthub/backend"
)

// eventsChannel is the Wails event that carries batches of committed run
// events to the page (frontend/src/lib/api/wails.ts).
const eventsChannel = "agenthub:events"

// flushEvery coalesces streamed deltas: one emit per tick instead of one
// per delta keeps the webview responsive.
const flushEvery = 50 * time.Millisecond

// maxPending bounds the batch held for a stalled page; past it the oldest
// events are dropped and the page re-reads them by sequence.
const maxPending = 10000

// bridge is the backend.Sink that forwards committed events to the window.
// Publish never blocks the engine: it appends to a batch that a goroutine
// emits every tick.
type bridge struct {
	emit func(ctx context.Context, name string, data ...any)
	// seen, when set, is called after each emitted batch (the title count).
	seen func(ctx context.Context, batch []backend.Event)

	mu      sync.Mutex
	pending []backend.Event
	dropped bool
}

// Publish implements backend.Sink.
func (b *bridge) Publish(ev backend.Event) {
	b.mu.Lock()
	defer b.mu.Unlock()
	if len(b.pending) >= maxPending {
		b.pending = b.pending[1:]
		b.dropped = true
	}
	b.pending = append(b.pending, ev)
}

// run emits batches until ctx ends. Every event carries its run and
// sequence, so the page orders, deduplicates and fills gaps itself.
func (b *bridge) run(ctx context.Context) {
	t := time.NewTicker(flushEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			b.flush(ctx)
		}
	}
}

func (b *bridge) flush(ctx context.Context) {
	b.mu.Lock()
	batch, dropped := b.pending, b.dropped
	b.pending, b.dropped = nil, false
	b.mu.Unlock()
	if dropped {
		// The page sees the hole in the sequence and re-reads it.
		slog.Warn("the window fell behind; older events were dropped from the bridge")
	}
	if len(batch) > 0 {
		b.emit(ctx, eventsChannel, batch)
		if b.seen != nil {
			b.seen(ctx, batch)
		}
	}
}
