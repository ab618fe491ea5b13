package app

import (
	"context"
	"strings"
	"sync"
	"testing"
	"time"

	"agenthub/backend"
)

// TestBridgeCoalescesInOrder replaces runtime.EventsEmit (which exits the
// process without a Wails context) and checks that events arrive in
// batches, in publish order, none lost.
func TestBridgeCoalescesInOrder(t *testing.T) {
	var mu sync.Mutex
	var batches [][]backend.Event
	b := &bridge{emit: func(_ context.Context, name string, data ...any) {
		if name != eventsChannel {
			t.Errorf("emitted on %q", name)
		}
		mu.Lock()
		batches = append(batches, data[0].([]backend.Event))
		mu.Unlock()
	}}
	ctx, cancel := context.WithCancel(t.Context())
	done := make(chan struct{})
	go func() { b.run(ctx); close(done) }()
	const n = 500
	for i := 1; i <= n; i++ {
		b.Publish(backend.Event{RunID: "run_a", Sequence: int64(i)})
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		mu.Lock()
		var got []backend.Event
		for _, batch := range batches {
			got = append(got, batch...)
		}
		count := len(batches)
		mu.Unlock()
		if len(got) == n {
			for i, ev := range got {
				if ev.Sequence != int64(i+1) {
					t.Fatalf("event %d has sequence %d", i, ev.Sequence)
				}
			}
			if count > 10 {
				t.Fatalf("%d emits for %d events published at once: not coalesced", count, n)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("%d of %d events emitted", len(got), n)
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	<-done
}

func TestBridgeBoundsAStalledPage(t *testing.T) {
	b := &bridge{emit: func(context.Context, string, ...any) {}}
	for i := 0; i < maxPending+10; i++ {
		b.Publish(backend.Event{Sequence: int64(i)})
	}
	if len(b.pending) != maxPending || !b.dropped || b.pending[0].Sequence != 10 {
		t.Fatalf("pending %d, dropped %v, first %d", len(b.pending), b.dropped, b.pending[0].Sequence)
	}
}

func TestTitleCountFollowsPendingApprovals(t *testing.T) {
	var titles []string
	pending := 0
	a := &attention{setTitle: func(_ context.Context, s string) { titles = append(titles, s) },
		pending: func() (int, error) { return pending, nil }}
	for _, n := range []int{0, 2, 2, 1, 0} {
		pending = n
		a.refresh(t.Context())
	}
	if got := strings.Join(titles, "|"); got != "AgentHub (2)|AgentHub (1)|AgentHub" {
		t.Fatalf("titles %q", got)
	}
	if !touches([]backend.Event{{Type: backend.EvMessageDelta}, {Type: backend.EvApprovalRequested}}) ||
		touches([]backend.Event{{Type: backend.EvMessageDelta}}) {
		t.Fatal("touches misjudges which batches can change the count")
	}
}
