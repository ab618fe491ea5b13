package profile

import (
	"fmt"
	"net"
	"net/url"
	"path/filepath"
	"regexp"
	"strings"

	"agenthub/backend/keychain"
)

// MCPServer is one MCP server (docs/TOOLS.md): a program started over stdio
// when a run first needs its tools (command), or a running server reached
// over Streamable HTTP (url).
type MCPServer struct {
	Name    string   `toml:"name"`    // in tool names: mcp__<name>__<tool>
	Command string   `toml:"command"` // absolute, or a program on the login shell's PATH
	Args    []string `toml:"args"`
	// Env names the variables passed from AgentHub's environment (an
	// allow-list of names; values never appear in a profile).
	Env []string `toml:"env"`
	// URL is a Streamable HTTP endpoint: https, or http on a loopback host
	// only (headers may carry credentials). Never with command.
	URL string `toml:"url"`
	// Headers are sent to a url server; each value is a reference (an
	// environment variable's name or a keychain entry), never the value.
	Headers []MCPHeader `toml:"headers"`
	// AllowReadOnly lets tools the server annotates read-only run without
	// asking; everything else always asks.
	AllowReadOnly bool     `toml:"allow_read_only"`
	CallTimeout   Duration `toml:"call_timeout"`
	// Network lets a command server open TCP connections (a server that
	// calls a web API). Without it the server is confined to no network;
	// it always writes only its state dir, a private temp dir and the
	// directories its args name (docs/TOOLS.md).
	Network bool `toml:"network"`
}

// MCPHeader is one HTTP header of a url server. Its value is read when the
// session starts from the environment variable Env or the OS keychain
// entry Keychain ("service/account"), exactly one of them, and Prefix
// (e.g. "Bearer ") is put before it.
type MCPHeader struct {
	Name     string `toml:"name"`
	Env      string `toml:"env"`
	Keychain string `toml:"keychain"`
	Prefix   string `toml:"prefix"`
}

// headerNameRE is an HTTP field name (RFC 9110 token).
var headerNameRE = regexp.MustCompile("^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")

// validateMCP checks the MCP servers: names that make valid, unambiguous
// tool names, one program per command or one url, variable names (never
// values) in env and headers.
func validateMCP(servers []MCPServer) error {
	seen := map[string]bool{}
	for i, s := range servers {
		switch {
		case !mcpNameRE.MatchString(s.Name) || len(s.Name) > 24:
			return fmt.Errorf("mcp_servers[%d].name %q: use lower case letters, digits and '-', at most 24", i, s.Name)
		case seen[s.Name]:
			return fmt.Errorf("mcp_servers: the name %q is used twice", s.Name)
		case s.Command != "" && s.URL != "":
			return fmt.Errorf("mcp_servers %s: command and url both name the server: keep one", s.Name)
		case s.URL != "":
			if err := s.validateURL(); err != nil {
				return err
			}
		case s.Command == "":
			return fmt.Errorf("mcp_servers %s: command or url is required", s.Name)
		case !filepath.IsAbs(s.Command) && strings.ContainsAny(s.Command, " \t/"):
			return fmt.Errorf("mcp_servers %s: command %q: name one program (arguments go in args), or give an absolute path", s.Name, s.Command)
		case len(s.Headers) > 0:
			return fmt.Errorf("mcp_servers %s: headers are for url servers; pass a stdio server its secrets through env", s.Name)
		}
		for _, e := range s.Env {
			if !envNameRE.MatchString(e) {
				return fmt.Errorf("mcp_servers %s: env %q must be the name of an environment variable, not a value", s.Name, e)
			}
		}
		seen[s.Name] = true
	}
	return nil
}

// validateURL checks a url server: the endpoint, no process settings, and
// headers whose values are references.
func (s MCPServer) validateURL() error {
	u, err := url.Parse(s.URL)
	switch {
	case err != nil || u.Host == "" || (u.Scheme != "http" && u.Scheme != "https"):
		return fmt.Errorf("mcp_servers %s: url %q: write an http(s) URL such as \"http://127.0.0.1:8931/mcp\"", s.Name, s.URL)
	case u.User != nil:
		return fmt.Errorf("mcp_servers %s: url: no credentials in the URL; use headers with env or keychain", s.Name)
	case u.Scheme == "http" && !loopback(u.Hostname()):
		return fmt.Errorf("mcp_servers %s: url %q: plain http only on a loopback host; use https", s.Name, s.URL)
	case len(s.Args) > 0 || len(s.Env) > 0 || s.Network:
		return fmt.Errorf("mcp_servers %s: args, env and network are for command servers; a url server is not started by AgentHub", s.Name)
	}
	names := map[string]bool{}
	for _, h := range s.Headers {
		key := strings.ToLower(h.Name)
		switch {
		case !headerNameRE.MatchString(h.Name):
			return fmt.Errorf("mcp_servers %s: header name %q is not an HTTP field name", s.Name, h.Name)
		case names[key]:
			return fmt.Errorf("mcp_servers %s: header %s is named twice", s.Name, h.Name)
		case (h.Env == "") == (h.Keychain == ""):
			return fmt.Errorf("mcp_servers %s: header %s: name its value with exactly one of env or keychain (never the value)", s.Name, h.Name)
		case h.Env != "" && !envNameRE.MatchString(h.Env):
			return fmt.Errorf("mcp_servers %s: header %s: env %q must be the name of an environment variable, not a value", s.Name, h.Name, h.Env)
		case strings.ContainsAny(h.Prefix, "\r\n"):
			return fmt.Errorf("mcp_servers %s: header %s: the prefix must be one line", s.Name, h.Name)
		}
		if h.Keychain != "" {
			if _, err := keychain.ParseRef(h.Keychain); err != nil {
				return fmt.Errorf("mcp_servers %s: header %s: %w", s.Name, h.Name, err)
			}
		}
		names[key] = true
	}
	return nil
}

// loopback reports whether host is localhost or a loopback address.
func loopback(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}
