// Package script is the scripted runtime: a playbook file drives a run
// through the real engine, tools and approval gate, step by step, with no
// model behind it. It is the offline default (the bundled demo profile) and
// the tool for deterministic end-to-end tests.
//
// A playbook is never presented as an AI model: runs it drives are marked
// scripted. It must not execute anything itself; it only proposes tool
// calls, which go through the gate like any model's.
package script

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"regexp"
	"strings"

	"github.com/pelletier/go-toml/v2"
)

// Version is the playbook format this package reads.
const Version = 1

// Playbook is a parsed playbook file (docs/PLAYBOOK.md).
type Playbook struct {
	Version     int    `toml:"version"`
	Name        string `toml:"name"`
	Description string `toml:"description"`
	// Executor is the run's executor (sequential by default;
	// parallel_batch_approval puts a step's gated calls to the reviewer
	// together, as the Changes view reviews them).
	Executor string `toml:"executor"`
	Steps    []Step `toml:"step"`
}

// Step is one inference: the assistant's text and the tool calls it makes.
type Step struct {
	// Expect lists texts that the previous step's tool results must all
	// contain; a miss fails the run with the step and the missing text.
	Expect []string `toml:"expect"`
	// Bind captures values from this run's tool results so far into
	// variables for Say and call arguments, as {{name}}.
	Bind map[string]Binding `toml:"bind"`
	Say  string             `toml:"say"`
	// Calls are proposed in order; the engine gates and executes them.
	Calls []Call `toml:"call"`
}

// Binding captures the first submatch of Pattern (RE2), or the whole match
// if it has no group; Default applies when nothing matches.
type Binding struct {
	Pattern string `toml:"pattern"`
	Default string `toml:"default"`
	// All joins every match with newlines instead of taking the first.
	All bool `toml:"all"`
	re  *regexp.Regexp
}

// Call is one tool call; string values in Args may use {{name}}.
type Call struct {
	Tool string         `toml:"tool"`
	Args map[string]any `toml:"args"`
}

// Parse reads and validates a playbook. Unknown fields are errors, so a
// typo does not silently drop a step's expectations.
func Parse(data []byte) (*Playbook, error) {
	var p Playbook
	dec := toml.NewDecoder(bytes.NewReader(data)).DisallowUnknownFields()
	if err := dec.Decode(&p); err != nil {
		var strict *toml.StrictMissingError
		if errors.As(err, &strict) {
			return nil, fmt.Errorf("playbook: %s", strings.TrimSpace(strict.String()))
		}
		return nil, fmt.Errorf("playbook: %w", err)
	}
	if err := p.validate(); err != nil {
		return nil, fmt.Errorf("playbook %q: %w", p.Name, err)
	}
	return &p, nil
}

var varName = regexp.MustCompile(`^[a-z][a-z0-9_]*$`)

func (p *Playbook) validate() error {
	if p.Version != Version {
		return fmt.Errorf("version %d is not supported (want %d)", p.Version, Version)
	}
	if len(p.Steps) == 0 {
		return errors.New("no steps")
	}
	switch p.Executor {
	case "", "sequential", "parallel_batch_approval", "parallel_streaming":
	default:
		return fmt.Errorf("executor %q: use sequential, parallel_batch_approval or parallel_streaming", p.Executor)
	}
	for i := range p.Steps {
		s := &p.Steps[i]
		for name, b := range s.Bind {
			if !varName.MatchString(name) {
				return fmt.Errorf("step %d: variable name %q: use lower case letters, digits and _", i+1, name)
			}
			re, err := regexp.Compile(b.Pattern)
			if err != nil {
				return fmt.Errorf("step %d: bind %s: %w", i+1, name, err)
			}
			b.re = re
			s.Bind[name] = b
		}
		for j, c := range s.Calls {
			if c.Tool == "" {
				return fmt.Errorf("step %d call %d: no tool", i+1, j+1)
			}
			if _, err := json.Marshal(c.Args); err != nil {
				return fmt.Errorf("step %d call %d: arguments: %w", i+1, j+1, err)
			}
		}
	}
	if last := p.Steps[len(p.Steps)-1]; len(last.Calls) > 0 {
		return errors.New("the last step must make no tool calls, so the run can complete")
	}
	return nil
}
