// Package agentproc starts and ends the process of an agent CLI session,
// the same way for every runtime adapter: in the run's workspace root,
// with the environment the adapter allow-listed, every stdout line kept in
// the raw output (rawlog) before the adapter reads it; at the end of a
// turn its input is closed and a CLI that does not exit is stopped, and
// one that exited early fails the run with its scrubbed stderr. It also
// holds what counts as output that stopped making sense. Processes are
// started and stopped only through backend/proc.
package agentproc

import (
	"context"
	"fmt"
	"net/url"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"time"

	"agenthub/backend"
	"agenthub/backend/confine"
	"agenthub/backend/proc"
	"agenthub/backend/runtime/rawlog"
	"agenthub/backend/scrub"
)

// Spec is how a session starts its CLI.
type Spec struct {
	Label string // the CLI in messages: "Claude Code"
	Path  string // the program
	Args  []string
	Dir   string   // the workspace root
	Env   []string // the whole environment
	Stdin bool
	Raw   *rawlog.Log                 // keeps every stdout line; closed when the start fails
	Lines func(line []byte, cut bool) // the adapter's reader, on proc's output goroutine, in line order

	// ModelURL is the model endpoint the CLI talks to: its TCP port is the
	// only one the CLI may connect to. Empty means the endpoints the
	// environment names (ANTHROPIC_BASE_URL, GOOGLE_GEMINI_BASE_URL, any
	// *_BASE_URL); with none, the CLI's TCP is unrestricted.
	ModelURL string
	// Read and Write are more paths the CLI may read, or read and write,
	// beyond [Confinement]'s.
	Read, Write []confine.Dir
	// Unconfined, when set, says why the CLI cannot run under Landlock (it
	// sandboxes its own commands with mounts, which Landlock forbids); it
	// is then only supervised, so it still dies with AgentHub.
	Unconfined string
}

// Confinement is what the CLI and every command it runs may do: write the
// workspace, its own state dir (the HOME its environment names) and a
// private temp dir; read the system, the tools on its PATH, its install
// dir and the workspace; connect over TCP only to the model's port (and a
// proxy's, when the environment names one).
func (s Spec) Confinement() confine.Rules {
	env := map[string]string{}
	for _, kv := range s.Env {
		if k, v, ok := strings.Cut(kv, "="); ok {
			env[k] = v
		}
	}
	read := append(confine.System(), confine.PathDirs(env["PATH"])...)
	read = append(read, confine.InstallDirs(s.Path)...)
	read = append(read, confine.ArgumentPaths(s.Args, confine.LabelInstall)...)
	read = append(read, confine.Dir{Path: s.Dir, Label: confine.LabelWorkspace})
	write := []confine.Dir{{Path: s.Dir, Label: confine.LabelWorkspace}}
	if home := env["HOME"]; filepath.IsAbs(home) {
		write = append(write, confine.Dir{Path: home, Label: confine.LabelState})
	}
	r := confine.Rules{Read: append(read, s.Read...), Write: append(write, s.Write...), PrivateTemp: true,
		Network: confine.Network{Any: true}}
	var ports []uint16
	if port := urlPort(s.ModelURL); port != 0 {
		ports = append(ports, port)
	} else {
		for _, kv := range s.Env {
			if k, v, _ := strings.Cut(kv, "="); strings.HasSuffix(k, "_BASE_URL") && urlPort(v) != 0 {
				ports = append(ports, urlPort(v))
			}
		}
	}
	if len(ports) > 0 {
		for _, name := range []string{"HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"} {
			if p := urlPort(env[name]); p != 0 {
				ports = append(ports, p)
			}
		}
		r.Network = confine.Network{ConnectTCP: ports}
	}
	return r
}

// urlPort is the TCP port of an http(s) URL, 0 when it is none.
func urlPort(raw string) uint16 {
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return 0
	}
	if p := u.Port(); p != "" {
		n, err := strconv.ParseUint(p, 10, 16)
		if err != nil {
			return 0
		}
		return uint16(n)
	}
	switch u.Scheme {
	case "https":
		return 443
	case "http":
		return 80
	}
	return 0
}

// maxOutput bounds the stderr kept of a CLI (stdout goes to Lines).
const maxOutput = 256 << 10

// Start starts the CLI in its own process group, confined (see
// [Spec.Confinement]). A CLI that cannot be started is runtime_unavailable.
func Start(spec Spec) (*proc.Process, error) {
	read := spec.Lines
	var rules *confine.Rules
	if spec.Unconfined == "" {
		r := spec.Confinement()
		rules = &r
	}
	p, err := proc.Start(context.Background(), proc.Spec{Path: spec.Path, Args: spec.Args, Dir: spec.Dir,
		Env: spec.Env, Stdin: spec.Stdin, MaxOutput: maxOutput, Confine: rules, Lines: func(b []byte, cut bool) {
			spec.Raw.Write(b, cut)
			read(b, cut)
		}})
	if err != nil {
		spec.Raw.Close()
		return nil, &backend.Error{Code: backend.FailRuntimeUnavailable, Message: spec.Label + " could not be started",
			Err: err}
	}
	return p, nil
}

// Tail is the end of a CLI's stderr that a failure may show, before
// scrubbing.
func Tail(stderr []byte) string {
	if len(stderr) > 2048 {
		stderr = stderr[len(stderr)-2048:]
	}
	return string(stderr)
}

// Finish ends a CLI whose turn is over: it exits when its input closes;
// one that has not exited after grace is stopped. mu, when set, is the
// session's lock on writing to the CLI's input.
func Finish(p *proc.Process, mu sync.Locker, grace time.Duration) {
	if p == nil {
		return
	}
	if mu != nil {
		mu.Lock()
	}
	if in := p.Stdin(); in != nil {
		_ = in.Close()
	}
	if mu != nil {
		mu.Unlock()
	}
	select {
	case <-p.Done():
	case <-time.After(grace):
		_ = p.Stop(2 * time.Second)
	}
}

// ExitError is the failure of a CLI that exited before its turn ended:
// schema_validation_failed when at least half of its lines could not be
// read, else runtime_unavailable with its exit code and the tail of its
// stderr (scrubbed by the caller).
func ExitError(label string, code int, tail string, invalid, lines int) error {
	if invalid > 0 && invalid >= lines/2 {
		return &backend.Error{Code: backend.FailSchemaValidation,
			Message: fmt.Sprintf("%s's output could not be read (%d of %d lines)", label, invalid, lines)}
	}
	msg := fmt.Sprintf("%s exited with code %d before finishing the turn", label, code)
	if tail != "" {
		msg += ": " + scrub.Clip(tail, 600)
	}
	return &backend.Error{Code: backend.FailRuntimeUnavailable, Detail: "exit", Message: msg}
}

// Diag is a line of a CLI's output that could not be used: the payload of
// a schema.validation_failed event.
type Diag struct {
	Runtime string `json:"runtime"`
	Line    int    `json:"line"`
	Problem string `json:"problem"`
	Excerpt string `json:"excerpt,omitempty"`
}

// MaxDiags bounds the problems of one session recorded as events; the raw
// output keeps every line.
const MaxDiags = 50

// maxInvalid is where a session's output has stopped making sense.
const maxInvalid = 200

// Lost stops the CLI once invalid, the count of its unusable lines so
// far, reaches the point where its output has stopped making sense; the
// run then fails as the process exits. It does not block.
func Lost(p *proc.Process, invalid int) {
	if invalid == maxInvalid && p != nil {
		go func() { _ = p.Stop(2 * time.Second) }()
	}
}
