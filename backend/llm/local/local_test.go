package local

import (
	"net"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// serve starts a loopback server answering path with body.
func serve(t *testing.T, path, body string) string {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != path {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write([]byte(body))
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// closedURL is a loopback address where nothing listens.
func closedURL(t *testing.T) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close()
	return "http://" + addr
}

// TestFind runs real loopback servers speaking Ollama's tag list and
// OpenAI's model list, next to a closed port, a server that answers 404, one
// that answers other JSON and one that never answers: only the first ones
// are found, with their models sorted, in probe order, within the timeout.
func TestFind(t *testing.T) {
	ollama := serve(t, "/api/tags", `{"models":[{"name":"qwen3:0.6b","size":1},{"name":"llama3.2:1b"}]}`)
	openai := `{"object":"list","data":[{"id":"qwen2.5-coder-7b-instruct","object":"model"},{"id":"gemma-3-4b"}]}`
	lmstudio := serve(t, "/v1/models", openai)
	vllm := serve(t, "/v1/models", `{"object":"list","data":[]}`)
	notFound := serve(t, "/elsewhere", `{}`)
	other := serve(t, "/v1/models", `{"hello":"world"}`)
	stuck := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(5 * time.Second):
		}
	}))
	t.Cleanup(stuck.Close)

	probes := []Probe{
		{Kind: Ollama, Root: ollama + "/"},
		{Kind: LMStudio, Root: lmstudio},
		{Kind: LlamaCpp, Root: closedURL(t)},
		{Kind: VLLM, Root: vllm},
		{Kind: LlamaCpp, Root: notFound},
		{Kind: LMStudio, Root: other},
		{Kind: Ollama, Root: stuck.URL},
		{Kind: "mystery", Root: lmstudio},
	}
	start := time.Now()
	got := Find(t.Context(), nil, probes)
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("Find took %s: the probes are not bounded or not concurrent", took)
	}
	want := []Server{
		{Kind: Ollama, Label: "Ollama", BaseURL: ollama + "/v1", Models: []string{"llama3.2:1b", "qwen3:0.6b"}},
		{Kind: LMStudio, Label: "LM Studio", BaseURL: lmstudio + "/v1",
			Models: []string{"gemma-3-4b", "qwen2.5-coder-7b-instruct"}},
		{Kind: VLLM, Label: "vLLM", BaseURL: vllm + "/v1", Models: []string{}},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("Find (-want +got):\n%s", d)
	}
}

func TestFindNothing(t *testing.T) {
	got := Find(t.Context(), nil, []Probe{{Kind: Ollama, Root: closedURL(t)}})
	if got == nil || len(got) != 0 {
		t.Errorf("Find = %#v, want an empty, non-nil list (JSON [])", got)
	}
}

func TestProbesFromEnv(t *testing.T) {
	env := func(v string) func(string) string {
		return func(k string) string {
			if k == EnvVar {
				return v
			}
			return ""
		}
	}
	for _, tc := range []struct {
		in      string
		want    []Probe
		wantErr bool
	}{
		{in: "", want: Defaults},
		{in: "none", want: []Probe{}},
		{in: "ollama=http://127.0.0.1:21434, lmstudio=http://localhost:1",
			want: []Probe{{Ollama, "http://127.0.0.1:21434"}, {LMStudio, "http://localhost:1"}}},
		{in: "vllm=http://127.0.0.1:8001,llamacpp=https://127.0.0.1:8081",
			want: []Probe{{VLLM, "http://127.0.0.1:8001"}, {LlamaCpp, "https://127.0.0.1:8081"}}},
		{in: "ollama", wantErr: true},
		{in: "gpt=http://127.0.0.1:1", wantErr: true},
		{in: "ollama=127.0.0.1:11434", wantErr: true},
	} {
		got, err := ProbesFromEnv(env(tc.in))
		if (err != nil) != tc.wantErr {
			t.Errorf("%q: err = %v", tc.in, err)
			continue
		}
		if d := cmp.Diff(tc.want, got); !tc.wantErr && d != "" {
			t.Errorf("%q (-want +got):\n%s", tc.in, d)
		}
	}
}
