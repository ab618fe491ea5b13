package api

import (
	"context"
	"time"

	"agenthub/backend/llm/local"
)

// localModelsWait bounds one LocalModels call: the probes run at once, each
// with its own shorter timeout.
const localModelsWait = 3 * time.Second

// LocalModels lists the model servers answering on loopback (Ollama, LM
// Studio, llama.cpp, vLLM) with their models, for the settings screen. None
// found is an empty list, not an error. It does not need the store, so it
// works before Open has finished.
func (s *SystemAPI) LocalModels() ([]local.Server, error) {
	probes := s.core.cfg.LocalServers
	if probes == nil {
		probes = local.Defaults
	}
	ctx, cancel := context.WithTimeout(context.Background(), localModelsWait)
	defer cancel()
	return local.Find(ctx, nil, probes), nil
}
