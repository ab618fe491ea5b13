package llm

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

// ServerKind names a local model server.
type ServerKind string

const (
	ServerOllama   ServerKind = "ollama"
	ServerLMStudio ServerKind = "lmstudio"
)

// LocalServer is a model server found on loopback. BaseURL is its
// OpenAI-compatible endpoint, ready for the openai provider's base URL.
type LocalServer struct {
	Kind    ServerKind `json:"kind"`
	BaseURL string     `json:"base_url"`
	Models  []string   `json:"models"`
}

// Probe is one place to look: Root is the server's root URL (scheme, host,
// port), so tests can point probes at loopback fakes.
type Probe struct {
	Kind ServerKind
	Root string
}

// DefaultProbes are the standard loopback ports of Ollama and LM Studio.
var DefaultProbes = []Probe{
	{Kind: ServerOllama, Root: "http://127.0.0.1:11434"},
	{Kind: ServerLMStudio, Root: "http://127.0.0.1:1234"},
}

// probeTimeout bounds each probe: a local server answers in milliseconds, and
// `agenthub doctor` and the settings screen must not hang on a closed port.
const probeTimeout = 800 * time.Millisecond

// maxProbeBody bounds what a probe reads, so a hostile listener on the port
// cannot exhaust memory.
const maxProbeBody = 4 << 20

// Discover probes [DefaultProbes] concurrently and returns the servers that
// answered, in probe order. A nil client means http.DefaultClient.
func Discover(ctx context.Context, c *http.Client) []LocalServer {
	return DiscoverAt(ctx, c, DefaultProbes)
}

// DiscoverAt probes the given places concurrently; a probe that fails or
// times out is simply absent from the result.
func DiscoverAt(ctx context.Context, c *http.Client, probes []Probe) []LocalServer {
	if c == nil {
		c = http.DefaultClient
	}
	found := make([]*LocalServer, len(probes))
	var wg sync.WaitGroup
	for i, p := range probes {
		wg.Go(func() {
			s, err := probe(ctx, c, p)
			if err == nil {
				found[i] = &s
			}
		})
	}
	wg.Wait()
	var out []LocalServer
	for _, s := range found {
		if s != nil {
			out = append(out, *s)
		}
	}
	return out
}

func probe(ctx context.Context, c *http.Client, p Probe) (LocalServer, error) {
	ctx, cancel := context.WithTimeout(ctx, probeTimeout)
	defer cancel()
	root := strings.TrimRight(p.Root, "/")
	s := LocalServer{Kind: p.Kind, BaseURL: root + "/v1"}
	switch p.Kind {
	case ServerOllama:
		var tags struct {
			Models []struct {
				Name string `json:"name"`
			} `json:"models"`
		}
		if err := getJSON(ctx, c, root+"/api/tags", &tags); err != nil {
			return s, err
		}
		for _, m := range tags.Models {
			s.Models = append(s.Models, m.Name)
		}
	case ServerLMStudio:
		var list struct {
			Data []struct {
				ID string `json:"id"`
			} `json:"data"`
		}
		if err := getJSON(ctx, c, root+"/v1/models", &list); err != nil {
			return s, err
		}
		for _, m := range list.Data {
			s.Models = append(s.Models, m.ID)
		}
	default:
		return s, fmt.Errorf("probe %s: unknown server kind", p.Kind)
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
	if err := json.NewDecoder(io.LimitReader(res.Body, maxProbeBody)).Decode(v); err != nil {
		return fmt.Errorf("probe %s: decode: %w", url, err)
	}
	return nil
}
