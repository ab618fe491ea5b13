package local

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
)

// EnvVar names the variable that replaces [Defaults]: a comma-separated list
// of KIND=URL, e.g. "ollama=http://127.0.0.1:21434,lmstudio=http://127.0.0.1:11234",
// or "none" to probe nothing. Tests and the e2e suite point it at fakes; a
// user can point it at a server on a non-standard port.
const EnvVar = "AGENTHUB_LOCAL_SERVERS"

// ProbesFromEnv returns the probes AGENTHUB_LOCAL_SERVERS names, or
// [Defaults] when it is unset or empty.
func ProbesFromEnv(getenv func(string) string) ([]Probe, error) {
	v := strings.TrimSpace(getenv(EnvVar))
	switch v {
	case "":
		return Defaults, nil
	case "none":
		return []Probe{}, nil
	}
	kinds := []Kind{Ollama, LMStudio, LlamaCpp, VLLM}
	var out []Probe
	for item := range strings.SplitSeq(v, ",") {
		kind, root, ok := strings.Cut(strings.TrimSpace(item), "=")
		k := Kind(strings.TrimSpace(kind))
		if !ok || !slices.Contains(kinds, k) {
			return nil, fmt.Errorf("%s: %q is not KIND=URL with KIND one of ollama, lmstudio, llamacpp, vllm", EnvVar, item)
		}
		u, err := url.Parse(strings.TrimSpace(root))
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			return nil, fmt.Errorf("%s: %q is not an http(s) URL", EnvVar, root)
		}
		out = append(out, Probe{Kind: k, Root: strings.TrimSpace(root)})
	}
	return out, nil
}
