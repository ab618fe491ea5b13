package acp

import (
	"strings"

	"agenthub/backend"
	"agenthub/backend/redact"
	"agenthub/backend/runtime/keyproxy"
)

// Model protocols a generic ACP agent's profile may declare
// (model_protocol): how the agent talks to its model, so that AgentHub's
// key proxy can stand in for the model server.
const (
	ProtocolOpenAI    = "openai"
	ProtocolAnthropic = "anthropic"
)

// protocol is what AgentHub knows of a model protocol: how the key is sent,
// the public server when the profile names none, and the variables the
// agents of that protocol read (the SDKs' own names), which get the key
// proxy's address and the per-session token.
type protocol struct {
	scheme         keyproxy.Scheme
	defaultURL     string
	urlVar, keyVar string
}

var protocols = map[string]protocol{
	ProtocolOpenAI:    {keyproxy.Bearer, "https://api.openai.com/v1", "OPENAI_BASE_URL", "OPENAI_API_KEY"},
	ProtocolAnthropic: {keyproxy.AnthropicKey, "https://api.anthropic.com", "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY"},
}

// errKeyRefused: a generic agent whose profile has a key but no model
// protocol. AgentHub cannot proxy a protocol it does not know, and a key
// in the agent's environment reaches every command the agent runs (and
// /proc/PID/environ), so the run is refused rather than the key passed.
var errKeyRefused = &backend.Error{Code: backend.FailPermissionDenied, Detail: "model_protocol_required",
	Message: "the profile gives the ACP agent a key (key_env) but does not say how the agent talks to its model, " +
		"so AgentHub cannot keep the key out of the agent's environment, where every command the agent runs could " +
		"read it; the run is refused rather than the key passed",
	Next: `Declare model_protocol = "openai" or "anthropic" in the profile (the agent then gets AgentHub's key ` +
		`proxy in OPENAI_BASE_URL/OPENAI_API_KEY or ANTHROPIC_BASE_URL/ANTHROPIC_API_KEY, never the key), or ` +
		`remove key_env and give the agent its credentials yourself.`}

// genericEndpoint is the endpoint of an agent other than Gemini CLI: with a
// key and a declared protocol, a key proxy of its own (the key stays in
// AgentHub); with a key and no protocol, a refusal; without a key, the
// profile's server, if it names one.
func (s *session) genericEndpoint() (endpoint, error) {
	c := s.cfg
	pr, known := protocols[c.ModelProtocol]
	switch {
	case c.APIKey == "" && known:
		return endpoint{url: strings.TrimRight(c.BaseURL, "/")}, nil
	case c.APIKey == "":
		return endpoint{}, nil
	case !known:
		return endpoint{}, errKeyRefused
	}
	upstream := c.BaseURL
	if upstream == "" {
		upstream = pr.defaultURL
	}
	kp, err := keyproxy.Start(upstream, c.APIKey, pr.scheme)
	if err != nil {
		return endpoint{}, &backend.Error{Code: backend.FailRuntimeUnavailable, Detail: "key_proxy",
			Message: "AgentHub could not start the key proxy for the ACP agent", Err: err,
			Next: "Check the profile's base_url: it must be an http or https URL."}
	}
	s.Keys = kp
	redact.Register(kp.Token()) // it opens only this proxy, but must not be stored either
	return endpoint{url: kp.URL(), key: kp.Token()}, nil
}

// protocolEnv are the variables that point a generic agent at ep: the
// protocol's base-URL and key variables, and the profile's key_env (the
// name the agent was configured to read) holding the token too.
func (c Config) protocolEnv(ep endpoint) []string {
	pr, ok := protocols[c.ModelProtocol]
	if !ok {
		return nil
	}
	var env []string
	if ep.url != "" {
		env = append(env, pr.urlVar+"="+ep.url)
	}
	if ep.key != "" {
		env = append(env, pr.keyVar+"="+ep.key)
		if c.KeyEnv != "" && c.KeyEnv != pr.keyVar {
			env = append(env, c.KeyEnv+"="+ep.key)
		}
	}
	return env
}
