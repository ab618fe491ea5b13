package native

import (
	"context"
	"sync"

	"agenthub/backend"
	"agenthub/backend/keychain"
	"agenthub/backend/llm"
	"agenthub/backend/llm/anthropic"
	"agenthub/backend/llm/openai"
	"agenthub/backend/profile"
)

// model is the model of a native profile: its provider's client with
// retries and fallback models. A key from the OS keychain is read when a
// run first needs it, not at startup, so a key stored later is found
// without a restart and a missing one fails that run (runtime_unavailable,
// with the next step) instead of hiding the profile.
func model(p profile.Profile, key string) backend.Model {
	if p.Keychain == "" {
		return buildNative(p, key)
	}
	ref, err := keychain.ParseRef(p.Keychain) // validated when the profile was read
	if err != nil {
		return &keychainModel{p: p, err: &backend.Error{Code: backend.FailRuntimeUnavailable, Detail: "keychain",
			Message: err.Error(), Err: err}}
	}
	return &keychainModel{p: p, ref: ref}
}

func buildNative(p profile.Profile, key string) *llm.Model {
	var client llm.Client
	switch p.Provider {
	case profile.ProviderAnthropic:
		client = anthropic.New(anthropic.Config{BaseURL: p.BaseURL, APIKey: key})
	default:
		client = openai.New(openai.Config{BaseURL: p.BaseURL, APIKey: key})
	}
	return llm.AsModel(llm.NewFallback(client, llm.Retry{}, p.Fallback...),
		llm.ModelConfig{Model: p.Model, System: p.System, MaxTokens: p.MaxTokens, ContextWindow: p.ContextWindow})
}

// keychainModel builds the model once the keychain yields the key. The key
// lives only inside the client; it is never stored or logged.
type keychainModel struct {
	p   profile.Profile
	ref keychain.Ref
	err error // a reference that cannot be read at all

	mu    sync.Mutex
	model *llm.Model
}

func (m *keychainModel) resolve() (*llm.Model, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.err != nil {
		return nil, m.err
	}
	if m.model == nil {
		key, err := keychain.Get(m.ref)
		if err != nil {
			return nil, err
		}
		m.model = buildNative(m.p, key)
	}
	return m.model, nil
}

// Stream implements backend.Model.
func (m *keychainModel) Stream(ctx context.Context, req backend.ModelRequest, delta func(string)) (backend.ModelResponse, error) {
	model, err := m.resolve()
	if err != nil {
		return backend.ModelResponse{}, err
	}
	return model.Stream(ctx, req, delta)
}

// ContextWindow keeps the profile's window for the engine's precheck.
func (m *keychainModel) ContextWindow() (window, reserve int) {
	return m.p.ContextWindow, m.p.MaxTokens
}
