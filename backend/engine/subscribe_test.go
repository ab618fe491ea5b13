package engine

import (
	"context"
	"encoding/json"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

	"agenthub/backend"
)

// pausedModel streams before deltas, waits for release, then streams after
// more and answers.
type pausedModel struct {
	before, after int
	release       chan struct{}
}

func (m pausedModel) Stream(ctx context.Context, _ backend.ModelRequest, delta func(string)) (backend.ModelResponse,
	error) {
	for range m.before {
		delta("word ")
	}
	select {
	case <-m.release:
	case <-ctx.Done():
		return backend.ModelResponse{}, ctx.Err()
	}
	for range m.after {
		delta("more ")
	}
	return backend.ModelResponse{Text: "done"}, nil
}

// TestSubscribeReplaysThenFollows (EV9): a subscriber with a cursor in a
// live run gets the backlog, several pages of it, then the live events,
// with no duplicate and no hole up to the terminal event; one that stops
// in the middle of a replay sees its channel closed, and nothing is left
// running.
func TestSubscribeReplaysThenFollows(t *testing.T) {
	defer goleak.VerifyNone(t)
	m := pausedModel{before: 2600, after: 400, release: make(chan struct{})}
	f := newFixture(t, filepath.Join(t.TempDir(), "a.db"), m, 4)
	defer f.close(t)
	r, err := f.e.Start(t.Context(), StartRequest{WorkspaceID: "ws_1", Task: "t"})
	if err != nil {
		t.Fatal(err)
	}
	waitSeq(t, f, r.ID, 2500)
	const cursor = 300
	ctx, cancel := context.WithCancel(t.Context())
	defer cancel()
	got := f.e.Subscribe(ctx, r.ID, cursor)
	close(m.release) // live events arrive while the backlog is replayed
	want := int64(cursor + 1)
	gaps := 0
	for ev := range got {
		if ev.Type == backend.EvSystemGap {
			// A subscriber that falls behind (a loaded machine) gets a gap
			// item instead of the overflowing events; the contract is that
			// re-reading its range leaves no hole and no duplicate.
			want = refill(t, f, r.ID, ev, want)
			gaps++
			continue
		}
		if ev.Sequence != want {
			t.Fatalf("got %s #%d, want #%d", ev.Type, ev.Sequence, want)
		}
		want++
		if ev.Type.Terminal() {
			break
		}
	}
	if gaps > 0 {
		t.Logf("%d gap(s) re-read from the store", gaps)
	}
	if want < 3000 {
		t.Fatalf("the stream ended at #%d", want-1)
	}
	select { // live events already replayed must not come again
	case ev := <-got:
		t.Fatalf("after the terminal event: %s #%d", ev.Type, ev.Sequence)
	case <-time.After(200 * time.Millisecond):
	}
	cancel()
	drained(t, got)

	ctx, cancel = context.WithCancel(t.Context())
	defer cancel()
	stopped := f.e.Subscribe(ctx, r.ID, 0)
	for range 10 {
		<-stopped
	}
	cancel()
	drained(t, stopped)
}

// drained waits for a subscription whose context ended to close.
func drained(t *testing.T, ch <-chan backend.Event) {
	t.Helper()
	deadline := time.After(10 * time.Second)
	for open := true; open; {
		select {
		case _, open = <-ch:
		case <-deadline:
			t.Fatal("the channel stayed open after its context ended")
		}
	}
}

func waitSeq(t *testing.T, f *fixture, runID string, seq int64) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		r, err := f.e.Run(t.Context(), runID)
		if err != nil {
			t.Fatal(err)
		}
		if r.LastSequence >= seq {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("run %s reached #%d, not #%d", runID, r.LastSequence, seq)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// refill re-reads a gap item's range from the store, as a client must, and
// checks that it starts where the stream stopped and holds every event of
// the range in order; it returns the sequence the stream must go on with.
func refill(t *testing.T, f *fixture, runID string, gap backend.Event, want int64) int64 {
	t.Helper()
	var g backend.Gap
	if err := json.Unmarshal(gap.Payload, &g); err != nil {
		t.Fatalf("gap payload: %v", err)
	}
	if g.FromSequence != want || g.ToSequence < g.FromSequence {
		t.Fatalf("gap %d..%d, want it to start at #%d", g.FromSequence, g.ToSequence, want)
	}
	evs, err := f.e.Events(t.Context(), runID, want-1, int(g.ToSequence-want+1))
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range evs {
		if ev.Sequence != want {
			t.Fatalf("re-read #%d, want #%d", ev.Sequence, want)
		}
		want++
	}
	if want != g.ToSequence+1 {
		t.Fatalf("re-read up to #%d, the gap ends at #%d", want-1, g.ToSequence)
	}
	return want
}
