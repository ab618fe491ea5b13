package httpapi

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"testing"
	"testing/fstest"

	"github.com/google/go-cmp/cmp"

	"agenthub/app/api"
	"agenthub/backend"
	"agenthub/backend/llm/local"
	"agenthub/backend/llm/local/localtest"
)

// TestLocalModels: GET /api/local-models needs the token and lists the
// servers answering where the core looks (here a fake Ollama on loopback
// and a closed port), the same list the window's SystemAPI.LocalModels
// returns.
func TestLocalModels(t *testing.T) {
	ollama := localtest.Server(local.Ollama, "qwen3:0.6b")
	defer ollama.Close()
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()

	cfg := api.Config{Home: t.TempDir(), Version: "test", Surface: backend.SurfaceBrowser,
		LocalServers: []local.Probe{{Kind: local.Ollama, Root: ollama.URL}, {Kind: local.LMStudio, Root: closed.URL}}}
	core, err := api.Open(t.Context(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { core.Close() })
	f := serve(t, New(core, fstest.MapFS{"index.html": {Data: []byte("<!doctype html>")}}, &fakeSource{}, NewToken()))

	if code, _, _ := f.do(t, "GET", "/api/local-models", "", nil); code != http.StatusUnauthorized {
		t.Fatalf("without the token: %d, want 401", code)
	}
	code, body, _ := f.do(t, "GET", "/api/local-models", "", f.auth())
	if code != http.StatusOK {
		t.Fatalf("GET /api/local-models: %d %s", code, body)
	}
	var got []local.Server
	if err := json.Unmarshal([]byte(body), &got); err != nil {
		t.Fatal(err)
	}
	want := []local.Server{{Kind: local.Ollama, Label: "Ollama", BaseURL: ollama.URL + "/v1", Models: []string{"qwen3:0.6b"}}}
	if d := cmp.Diff(want, got); d != "" {
		t.Errorf("local models (-want +got):\n%s", d)
	}
	direct, err := api.NewSystemAPI(core).LocalModels()
	if err != nil || !cmp.Equal(direct, got) {
		t.Errorf("SystemAPI.LocalModels = %v, %v; want what HTTP returned", direct, err)
	}
}
