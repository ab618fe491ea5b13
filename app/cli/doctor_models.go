package cli

import (
	"context"
	"fmt"
	"strings"

	"agenthub/backend"
	"agenthub/backend/llm/local"
)

// localServers reads AGENTHUB_LOCAL_SERVERS, the places the settings
// screen and doctor look for local model servers.
func localServers(getenv func(string) string) ([]local.Probe, error) {
	probes, err := local.ProbesFromEnv(getenv)
	if err != nil {
		return nil, backend.Errorf(backend.CodeInvalidInput, "%s", err.Error())
	}
	return probes, nil
}

// modelServerChecks probe the local model servers (Ollama, LM Studio,
// llama.cpp, vLLM) on their loopback ports, or where AGENTHUB_LOCAL_SERVERS
// says, and list their models.
func modelServerChecks(ctx context.Context, getenv func(string) string) []check {
	probes, err := local.ProbesFromEnv(getenv)
	if err != nil {
		return []check{{name: "local model servers", optional: true, detail: err.Error(),
			fix: "fix or unset " + local.EnvVar}}
	}
	found := map[string]local.Server{}
	for _, s := range local.Find(ctx, nil, probes) {
		found[s.BaseURL] = s
	}
	var out []check
	for _, p := range probes {
		c := check{name: p.Kind.Label(), optional: true}
		if s, ok := found[strings.TrimRight(p.Root, "/")+"/v1"]; ok {
			c.ok = true
			c.detail = fmt.Sprintf("running at %s with %d model(s)", s.BaseURL, len(s.Models))
			if len(s.Models) > 0 {
				c.detail += ": " + strings.Join(s.Models, ", ")
			}
		} else {
			c.detail = "not running at " + p.Root
			c.fix = "start it for offline runs with local models (optional)"
		}
		out = append(out, c)
	}
	return out
}
