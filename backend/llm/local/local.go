// Package local finds model servers running on this machine's loopback
// interface (Ollama, LM Studio, llama.cpp's server, vLLM) and lists their
// models, for `agenthub doctor` and the settings screen. A server found here
// is ready for a native profile: its BaseURL is the OpenAI-compatible
// endpoint to put in the profile's base_url.
//
// Invariants: it only sends GET requests to the places it is given (by
// default the servers' standard ports on 127.0.0.1), each bounded in time
// and in bytes, all at once; a place that does not answer, or answers
// something else, is simply absent from the result, never an error. It
// imports only the standard library.
package local

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"
)

// Kind names a kind of local model server.
type Kind string

const (
	Ollama   Kind = "ollama"
	LMStudio Kind = "lmstudio"
	LlamaCpp Kind = "llamacpp"
	VLLM     Kind = "vllm"
)

// Label is the product's name, as users know it.
func (k Kind) Label() string {
	switch k {
	case Ollama:
		return "Ollama"
	case LMStudio:
		return "LM Studio"
	case LlamaCpp:
		return "llama.cpp"
	case VLLM:
		return "vLLM"
	}
	return string(k)
}

// Server is a model server found on loopback.
type Server struct {
	Kind  Kind   `json:"kind"`
	Label string `json:"label"`
	// BaseURL is the OpenAI-compatible endpoint, for a profile's base_url.
	BaseURL string   `json:"baseUrl"`
	Models  []string `json:"models"` // sorted; empty when none is installed or loaded
}

// Probe is one place to look: Root is the server's root URL (scheme, host,
// port), so tests and AGENTHUB_LOCAL_SERVERS can point probes elsewhere.
type Probe struct {
	Kind Kind
	Root string
}

// Defaults are the standard loopback ports: Ollama 11434, LM Studio 1234,
// llama.cpp's llama-server 8080 and vLLM 8000.
var Defaults = []Probe{
	{Kind: Ollama, Root: "http://127.0.0.1:11434"},
	{Kind: LMStudio, Root: "http://127.0.0.1:1234"},
	{Kind: LlamaCpp, Root: "http://127.0.0.1:8080"},
	{Kind: VLLM, Root: "http://127.0.0.1:8000"},
}

// timeout bounds each probe: a local server answers in milliseconds, and
// doctor and the settings screen must not hang on a port that accepts and
// never answers.
const timeout = 800 * time.Millisecond

// maxBody bounds what a probe reads, so a hostile listener on the port
// cannot exhaust memory.
const maxBody = 4 << 20

// Find probes every place concurrently and returns the servers that
// answered, in probe order. A nil client means http.DefaultClient.
func Find(ctx context.Context, c *http.Client, probes []Probe) []Server {
	if c == nil {
		c = http.DefaultClient
	}
	found := make([]*Server, len(probes))
	var wg sync.WaitGroup
	for i, p := range probes {
		wg.Go(func() {
			if s, err := probe(ctx, c, p); err == nil {
				found[i] = &s
			}
		})
	}
	wg.Wait()
	out := []Server{}
	for _, s := range found {
		if s != nil {
			out = append(out, *s)
		}
	}
	return out
}

func probe(ctx context.Context, c *http.Client, p Probe) (Server, error) {
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	root := strings.TrimRight(p.Root, "/")
	s := Server{Kind: p.Kind, Label: p.Kind.Label(), BaseURL: root + "/v1", Models: []string{}}
	switch p.Kind {
	case Ollama: // its native listing also shows models not loaded yet
		var tags struct {
			Models *[]struct {
				Name string `json:"name"`
			} `json:"models"`
		}
		if err := getJSON(ctx, c, root+"/api/tags", &tags); err != nil {
			return s, err
		}
		if tags.Models == nil {
			return s, fmt.Errorf("probe %s: not an Ollama tag list", root)
		}
		for _, m := range *tags.Models {
			s.Models = append(s.Models, m.Name)
		}
	case LMStudio, LlamaCpp, VLLM: // OpenAI's model list
		var list struct {
			Data *[]struct {
				ID string `json:"id"`
			} `json:"data"`
		}
		if err := getJSON(ctx, c, root+"/v1/models", &list); err != nil {
			return s, err
		}
		if list.Data == nil {
			return s, fmt.Errorf("probe %s: not an OpenAI model list", root)
		}
		for _, m := range *list.Data {
			s.Models = append(s.Models, m.ID)
		}
	default:
		return s, fmt.Errorf("probe %s: unknown server kind %q", root, p.Kind)
	}
	slices.Sort(s.Models)
	return s, nil
}

func getJSON(ctx context.Context, c *http.Client, url string, v any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return fmt.Errorf("probe %s: %w", url, err)
	}
	res, err := c.Do(req)
	if err != nil {
		return fmt.Errorf("probe %s: %w", url, err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return fmt.Errorf("probe %s: HTTP %d", url, res.StatusCode)
	}
	if err := json.NewDecoder(io.LimitReader(res.Body, maxBody)).Decode(v); err != nil {
		return fmt.Errorf("probe %s: decode: %w", url, err)
	}
	return nil
}
