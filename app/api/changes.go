package api

import (
	"context"
	"encoding/json"
	"sync"

	"agenthub/backend"
)

// EvSystemChanged tells every surface that something outside the runs
// changed (workspaces, settings, profiles), whoever changed it: the window
// and browser tabs reload that part without a restart (issue 16). It has no
// run and no sequence, is never persisted, and is a hint: a subscriber that
// misses one reloads at its next start.
const EvSystemChanged backend.EventType = "system.changed"

// SystemChanged is the payload of system.changed.
type SystemChanged struct {
	What string `json:"what"` // workspaces | settings
}

// changeHub fans system.changed out to the every-run subscribers of one core
// (and its views).
type changeHub struct {
	mu   sync.Mutex
	subs map[chan backend.Event]struct{}
}

func newChangeHub() *changeHub { return &changeHub{subs: map[chan backend.Event]struct{}{}} }

// changed announces a change to every surface of this core.
func (c *Core) changed(what string) {
	raw, _ := json.Marshal(SystemChanged{What: what})
	ev := backend.Event{SchemaVersion: backend.SchemaVersion, Type: EvSystemChanged,
		Timestamp: backend.Stamp(nowUTC()), Payload: raw}
	if c.changes != nil {
		c.changes.mu.Lock()
		for ch := range c.changes.subs {
			select {
			case ch <- ev:
			default: // a hint: one that falls behind reloads anyway
			}
		}
		c.changes.mu.Unlock()
	}
	if c.cfg.Sink != nil {
		c.cfg.Sink.Publish(ev) // the window's bridge
	}
}

// withChanges merges system.changed into an every-run stream until ctx
// ends or the run events end.
func (c *Core) withChanges(ctx context.Context, runs <-chan backend.Event) <-chan backend.Event {
	if c.changes == nil {
		return runs
	}
	mine := make(chan backend.Event, 16)
	c.changes.mu.Lock()
	c.changes.subs[mine] = struct{}{}
	c.changes.mu.Unlock()
	out := make(chan backend.Event, 64)
	go func() {
		defer close(out)
		defer func() {
			c.changes.mu.Lock()
			delete(c.changes.subs, mine)
			c.changes.mu.Unlock()
		}()
		for {
			var ev backend.Event
			var ok bool
			select {
			case <-ctx.Done():
				return
			case ev, ok = <-runs:
				if !ok {
					return
				}
			case ev = <-mine:
			}
			select {
			case out <- ev:
			case <-ctx.Done():
				return
			}
		}
	}()
	return out
}
