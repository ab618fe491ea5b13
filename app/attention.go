package app

import (
	"context"
	"fmt"
	"log/slog"
	"sync"

	"github.com/wailsapp/wails/v2/pkg/runtime"

	"agenthub/backend"
)

// title is the window's name; the pending-approval count follows it.
const title = "AgentHub"

// attention keeps the window title's pending-approval count current and
// sends desktop notifications the page asks for (the page knows whether the
// window has focus; Go does not).
type attention struct {
	setTitle func(ctx context.Context, title string)
	notify   func(ctx context.Context, o runtime.NotificationOptions) error
	pending  func() (int, error)

	mu    sync.Mutex
	shown int
	ready bool // notifications initialised
}

// touches reports whether a batch can change the pending count.
func touches(batch []backend.Event) bool {
	for _, ev := range batch {
		switch ev.Type {
		case backend.EvApprovalRequested, backend.EvApprovalResolved, backend.EvRunCompleted,
			backend.EvRunFailed, backend.EvRunCancelled:
			return true
		}
	}
	return false
}

// refresh recounts pending approvals and retitles the window when it
// changed: "AgentHub (2)".
func (a *attention) refresh(ctx context.Context) {
	n, err := a.pending()
	if err != nil {
		slog.Debug("count pending approvals", "err", err)
		return
	}
	a.mu.Lock()
	changed := n != a.shown
	a.shown = n
	a.mu.Unlock()
	if changed {
		a.setTitle(ctx, titleFor(n))
	}
}

func titleFor(pending int) string {
	if pending == 0 {
		return title
	}
	return fmt.Sprintf("%s (%d)", title, pending)
}

// send shows a desktop notification; where the system has no notification
// service it returns the error, and the page falls back to the title count.
func (a *attention) send(ctx context.Context, heading, body string) error {
	a.mu.Lock()
	if !a.ready {
		if err := runtime.InitializeNotifications(ctx); err != nil {
			a.mu.Unlock()
			return fmt.Errorf("notifications are unavailable: %w", err)
		}
		a.ready = true
	}
	a.mu.Unlock()
	return a.notify(ctx, runtime.NotificationOptions{ID: "agenthub-approval", Title: heading, Body: body})
}
