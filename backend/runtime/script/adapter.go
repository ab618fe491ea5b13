package script

import (
	"errors"
	"fmt"
	"os"

	"agenthub/backend"
	"agenthub/backend/profile"
	"agenthub/backend/runtime"
)

func init() { runtime.Register(Adapter{}) }

// Adapter is the playbook runtime (runtime = "script"): never an AI model,
// every action gated by AgentHub like the built-in loop's.
type Adapter struct{}

func (Adapter) Name() string                                       { return profile.RuntimeScript }
func (Adapter) Capabilities(profile.Profile) *backend.Capabilities { return nil }
func (Adapter) Tools() map[string]backend.Tool                     { return nil }
func (Adapter) Binary() *runtime.Binary                            { return nil }

func (Adapter) Validate(p profile.Profile) error {
	if p.Playbook == "" {
		return errors.New("a script profile needs playbook = \"FILE\"")
	}
	return nil
}

// Build reads and parses the playbook now, so a broken one is a problem of
// its profile file, not of the first run.
func (Adapter) Build(p profile.Profile, _ runtime.Env) (runtime.Built, error) {
	text, err := os.ReadFile(p.Playbook)
	if err != nil {
		return runtime.Built{}, fmt.Errorf("read the playbook: %w", err)
	}
	pb, err := Parse(text)
	if err != nil {
		return runtime.Built{}, err
	}
	return runtime.Built{Model: NewModel(pb), Scripted: true}, nil
}
