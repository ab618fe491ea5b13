package llm

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"time"
)

// Target is one model to try: a client and the model name to request from it
// (empty keeps Request.Model).
type Target struct {
	Client Client
	Model  string
}

// Retry bounds the retries of one target.
type Retry struct {
	Attempts int           // per target, the first try included; default 3
	Base     time.Duration // first backoff; default 500ms, doubled per retry
	Max      time.Duration // backoff cap, also caps Retry-After; default 10s
}

func (r Retry) withDefaults() Retry {
	if r.Attempts <= 0 {
		r.Attempts = 3
	}
	if r.Base <= 0 {
		r.Base = 500 * time.Millisecond
	}
	if r.Max <= 0 {
		r.Max = 10 * time.Second
	}
	return r
}

// delay is the wait before retry number n (1-based): exponential backoff with
// jitter in [d/2, d], raised to the server's Retry-After, both capped.
func (r Retry) delay(n int, err error) time.Duration {
	d := r.Base << (n - 1)
	if d <= 0 || d > r.Max {
		d = r.Max
	}
	d = d/2 + rand.N(d/2+1)
	var e *Error
	if errors.As(err, &e) && e.RetryAfter > d {
		d = min(e.RetryAfter, r.Max)
	}
	return d
}

// Fallback is a [Client] that retries transient failures with backoff and
// then moves to the next target. Rules, in order:
//   - once any delta has reached the handler, nothing is retried: the
//     caller has already shown it, so the error is returned as is;
//   - a context overflow is returned at once, never retried and never a
//     reason to fall back (CX5); the engine compacts instead;
//   - auth, bad request and malformed stream errors are returned at once:
//     another model would hide a configuration fault;
//   - rate limit, 5xx, network errors and truncated streams are retried up
//     to Retry.Attempts, then the next target is tried;
//   - a model unavailable or quota error moves to the next target at once.
type Fallback struct {
	Targets []Target
	Retry   Retry
	Log     *slog.Logger // nil: slog.Default()
}

// NewFallback tries c with the requested model first, then with each of
// models in order.
func NewFallback(c Client, retry Retry, models ...string) *Fallback {
	ts := []Target{{Client: c}}
	for _, m := range models {
		ts = append(ts, Target{Client: c, Model: m})
	}
	return &Fallback{Targets: ts, Retry: retry}
}

// emitTracker records whether any delta reached the caller.
type emitTracker struct {
	h       Handler
	emitted bool
}

func (t *emitTracker) handle(ev Event) error {
	t.emitted = true
	return t.h(ev)
}

// Stream implements [Client].
func (f *Fallback) Stream(ctx context.Context, req Request, h Handler) (Response, error) {
	if len(f.Targets) == 0 {
		return Response{}, errors.New("llm fallback: no targets")
	}
	log := f.Log
	if log == nil {
		log = slog.Default()
	}
	retry := f.Retry.withDefaults()
	var last error
	for i, t := range f.Targets {
		r := req
		if t.Model != "" {
			r.Model = t.Model
		}
		resp, next, err := f.tryTarget(ctx, t.Client, r, h, retry, log)
		if !next {
			return resp, err
		}
		last = err
		if i+1 < len(f.Targets) {
			log.Warn("llm fallback to next model", "from_model", r.Model, "reason", kindOf(err))
		}
	}
	return Response{}, fmt.Errorf("all %d models failed: %w", len(f.Targets), last)
}

// tryTarget runs one target with retries. next reports whether the caller
// should move on to the next target.
func (f *Fallback) tryTarget(ctx context.Context, c Client, req Request, h Handler, retry Retry, log *slog.Logger) (resp Response, next bool, err error) {
	tr := &emitTracker{h: h}
	for attempt := 1; ; attempt++ {
		resp, err = c.Stream(ctx, req, tr.handle)
		if err == nil || tr.emitted || ctx.Err() != nil {
			return resp, false, err
		}
		var pe *Error
		if !errors.As(err, &pe) {
			return resp, false, err // handler or programming error: not ours to retry
		}
		switch {
		case errors.Is(err, ErrModelUnavailable), errors.Is(err, ErrQuota):
			return resp, true, err
		case !Retryable(err):
			return resp, false, err
		case attempt >= retry.Attempts:
			return resp, true, err
		}
		d := retry.delay(attempt, err)
		log.Info("llm retry", "model", req.Model, "attempt", attempt, "reason", kindOf(err), "delay_ms", d.Milliseconds())
		if err := sleep(ctx, d); err != nil {
			return Response{}, false, err
		}
	}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func kindOf(err error) string {
	var e *Error
	if errors.As(err, &e) {
		return e.Kind.Error()
	}
	return "other"
}
