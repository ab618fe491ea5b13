// Package localtest serves a fake local model server on loopback, speaking
// the model-list endpoint of the kind it stands in for (Ollama's /api/tags,
// the OpenAI-compatible /v1/models of LM Studio, llama.cpp and vLLM), for the
// tests of everything that probes for them: the prober itself, `doctor`,
// the HTTP API and the settings page's backend.
//
// It does not import package testing: the caller closes the server.
package localtest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"

	"agenthub/backend/llm/local"
)

// Server starts a fake server of kind listing models; answers to any
// other path or method are 404, as the real servers' are.
func Server(kind local.Kind, models ...string) *httptest.Server {
	path, body := listing(kind, models)
	return httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodGet || r.URL.Path != path {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		_, _ = w.Write(body)
	}))
}

// listing is the list endpoint of kind and its answer for models.
func listing(kind local.Kind, models []string) (string, []byte) {
	type named struct {
		Name string `json:"name"`
	}
	type entry struct {
		ID     string `json:"id"`
		Object string `json:"object"`
	}
	if kind == local.Ollama {
		tags := struct {
			Models []named `json:"models"`
		}{Models: []named{}}
		for _, m := range models {
			tags.Models = append(tags.Models, named{Name: m})
		}
		body, _ := json.Marshal(tags)
		return "/api/tags", body
	}
	list := struct {
		Object string  `json:"object"`
		Data   []entry `json:"data"`
	}{Object: "list", Data: []entry{}}
	for _, m := range models {
		list.Data = append(list.Data, entry{ID: m, Object: "model"})
	}
	body, _ := json.Marshal(list)
	return "/v1/models", body
}
