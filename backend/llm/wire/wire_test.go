package wire_test

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"testing/iotest"

	"agenthub/backend/llm"
	"agenthub/backend/llm/wire"

	"github.com/google/go-cmp/cmp"
)

func TestEndpoint(t *testing.T) {
	tests := []struct {
		base, path, want string
	}{
		{"https://api.openai.com/v1/", "chat/completions", "https://api.openai.com/v1/chat/completions"},
		{"http://127.0.0.1:11434/v1", "chat/completions", "http://127.0.0.1:11434/v1/chat/completions"},
		{"http://127.0.0.1:1234/api/v1/", "chat/completions", "http://127.0.0.1:1234/api/v1/chat/completions"},
		{"https://api.anthropic.com", "v1/messages", "https://api.anthropic.com/v1/messages"},
		{"http://127.0.0.1:8080/", "v1/messages", "http://127.0.0.1:8080/v1/messages"},
		{"http://gw.local/anthropic", "v1/messages", "http://gw.local/anthropic/v1/messages"},
	}
	for _, tt := range tests {
		got, err := wire.Endpoint(tt.base, tt.path)
		if err != nil || got != tt.want {
			t.Errorf("Endpoint(%q, %q) = %q, %v; want %q", tt.base, tt.path, got, err, tt.want)
		}
	}
	for _, bad := range []string{"127.0.0.1:11434/v1", "file:///etc/passwd", "http://[::1"} {
		if got, err := wire.Endpoint(bad, "chat/completions"); err == nil {
			t.Errorf("Endpoint(%q) = %q, want an error", bad, got)
		}
	}
}

func TestReader(t *testing.T) {
	tests := []struct {
		name, in string
		want     []wire.Event
	}{
		{"data only", "data: {\"a\":1}\n\ndata: [DONE]\n\n",
			[]wire.Event{{Data: []byte(`{"a":1}`)}, {Data: []byte("[DONE]")}}},
		{"named events, CRLF, comments, ids", ": keep-alive\r\nevent: ping\r\nid: 7\r\ndata: {}\r\n\r\nevent: message_stop\ndata:{\"x\":true}\n\n",
			[]wire.Event{{Name: "ping", Data: []byte("{}")}, {Name: "message_stop", Data: []byte(`{"x":true}`)}}},
		{"multi-line data joins with newlines", "data: a\ndata: b\n\n", []wire.Event{{Data: []byte("a\nb")}}},
		{"an event without data is not dispatched", "event: x\n\ndata: y\n\n", []wire.Event{{Data: []byte("y")}}},
		{"a cut-off last event is discarded", "data: whole\n\nevent: message_delta\ndata: {\"type\":\"mess", []wire.Event{{Data: []byte("whole")}}},
		{"a last event without its blank line is discarded", "data: whole\n\ndata: {}\n", []wire.Event{{Data: []byte("whole")}}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			// One byte per read: events split across reads must decode.
			r := wire.NewReader(iotest.OneByteReader(strings.NewReader(tt.in)))
			var got []wire.Event
			for {
				ev, err := r.Next()
				if err == io.EOF {
					break
				}
				if err != nil {
					t.Fatalf("Next: %v", err)
				}
				got = append(got, wire.Event{Name: ev.Name, Data: append([]byte(nil), ev.Data...)})
			}
			if d := cmp.Diff(tt.want, got); d != "" {
				t.Errorf("events (-want +got):\n%s", d)
			}
		})
	}
}

func TestReaderLongLine(t *testing.T) {
	big := strings.Repeat("x", 1<<20) // a tool argument larger than any buffer
	r := wire.NewReader(strings.NewReader("data: " + big + "\n\n"))
	ev, err := r.Next()
	if err != nil || string(ev.Data) != big {
		t.Fatalf("Next = %d bytes, %v; want %d bytes", len(ev.Data), err, len(big))
	}
}

func TestReaderPassesReadErrors(t *testing.T) {
	boom := errors.New("connection reset")
	r := wire.NewReader(io.MultiReader(strings.NewReader("data: a\n\ndata: b"), iotest.ErrReader(boom)))
	if _, err := r.Next(); err != nil {
		t.Fatalf("first event: %v", err)
	}
	if _, err := r.Next(); !errors.Is(err, boom) {
		t.Fatalf("err = %v, want the read error", err)
	}
}

// TestPostNeverFollowsARedirectElsewhere: the key header must not reach
// another origin. net/http drops Authorization on a cross-origin redirect
// but keeps x-api-key.
func TestPostNeverFollowsARedirectElsewhere(t *testing.T) {
	var leaked atomic.Value
	other := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		leaked.Store(r.Header.Get("X-Api-Key"))
		w.Header().Set("Content-Type", "text/event-stream")
	}))
	defer other.Close()
	first := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, other.URL+"/v1/messages", http.StatusTemporaryRedirect)
	}))
	defer first.Close()
	x := &llm.Exchange{}
	res, err := wire.Post(t.Context(), first.Client(), first.URL+"/v1/messages",
		http.Header{"X-Api-Key": {"sk-ant-secret"}}, map[string]any{"model": "m"}, x, "anthropic")
	if err == nil {
		res.Body.Close()
		t.Fatalf("Post followed the redirect")
	}
	if !errors.Is(err, llm.ErrBadRequest) {
		t.Errorf("err = %v, want a rejected request", err)
	}
	if v, _ := leaked.Load().(string); v != "" {
		t.Errorf("the other origin received the key %q", v)
	}
}

func TestPostClassifiesStatus(t *testing.T) {
	s := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("Content-Type") != "application/json" || r.Header.Get("User-Agent") != wire.UserAgent {
			http.Error(w, "bad headers", http.StatusBadRequest)
			return
		}
		w.Header().Set("Retry-After", "3")
		http.Error(w, `{"error":{"message":"slow down","type":"rate_limit"}}`, http.StatusTooManyRequests)
	}))
	defer s.Close()
	_, err := wire.Post(t.Context(), s.Client(), s.URL, nil, map[string]any{}, &llm.Exchange{}, "openai")
	var e *llm.Error
	if !errors.As(err, &e) || !errors.Is(err, llm.ErrRateLimited) || e.Status != 429 || e.RetryAfter.Seconds() != 3 {
		t.Fatalf("err = %#v, want a 429 rate limit with Retry-After 3s", err)
	}
}
