package profile

import (
	"strings"
	"testing"
)

func TestParseMCPHTTP(t *testing.T) {
	const head = "name = \"x\"\nruntime = \"native\"\nprovider = \"openai\"\nmodel = \"m\"\n[[mcp_servers]]\nname = \"web\"\n"
	tests := []struct{ name, text, wantErr string }{
		{"loopback http", `url = "http://127.0.0.1:8931/mcp"
headers = [{ name = "Authorization", env = "WEB_TOKEN", prefix = "Bearer " }, { name = "X-Team", keychain = "agenthub/team" }]`, ""},
		{"localhost and ipv6", `url = "http://[::1]:1/mcp"`, ""},
		{"https anywhere", `url = "https://mcp.example.com/mcp"`, ""},
		{"plain http off loopback", `url = "http://mcp.example.com/mcp"`, "loopback"},
		{"not a url", `url = "127.0.0.1:8931"`, "http(s) URL"},
		{"credentials in url", `url = "https://me:pw@mcp.example.com/mcp"`, "no credentials"},
		{"command and url", "url = \"http://127.0.0.1:1/mcp\"\ncommand = \"c\"", "keep one"},
		{"neither", `allow_read_only = true`, "command or url"},
		{"args with url", "url = \"http://127.0.0.1:1/mcp\"\nargs = [\"a\"]", "command servers"},
		{"header value in env", `url = "http://127.0.0.1:1/mcp"
headers = [{ name = "Authorization", env = "Bearer sk-123" }]`, "not a value"},
		{"header without reference", `url = "http://127.0.0.1:1/mcp"
headers = [{ name = "Authorization" }]`, "exactly one of env or keychain"},
		{"header with both", `url = "http://127.0.0.1:1/mcp"
headers = [{ name = "A", env = "A", keychain = "a/b" }]`, "exactly one"},
		{"header clear value field", `url = "http://127.0.0.1:1/mcp"
headers = [{ name = "A", value = "sk-123" }]`, "value"},
		{"header bad keychain", `url = "http://127.0.0.1:1/mcp"
headers = [{ name = "A", keychain = "nokey" }]`, "service/account"},
		{"header twice", `url = "http://127.0.0.1:1/mcp"
headers = [{ name = "A", env = "A" }, { name = "a", env = "B" }]`, "twice"},
		{"header bad name", `url = "http://127.0.0.1:1/mcp"
headers = [{ name = "A B", env = "A" }]`, "field name"},
		{"headers on stdio", "command = \"c\"\nheaders = [{ name = \"A\", env = \"A\" }]", "url servers"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			p, err := Parse([]byte(head + tc.text))
			if tc.wantErr == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Fatalf("err = %v, want it to mention %q (%+v)", err, tc.wantErr, p)
			}
		})
	}
	p, err := Parse([]byte(head + tests[0].text))
	if err != nil {
		t.Fatal(err)
	}
	s := p.MCP[0]
	if s.URL != "http://127.0.0.1:8931/mcp" || len(s.Headers) != 2 || s.Headers[0].Env != "WEB_TOKEN" ||
		s.Headers[0].Prefix != "Bearer " || s.Headers[1].Keychain != "agenthub/team" {
		t.Errorf("parsed %+v", s)
	}
}

// TestParsePolicyOverrides: a profile's [policy] uses the workspace file's
// rule syntax and may only ask or deny.
func TestParsePolicyOverrides(t *testing.T) {
	const head = "name = \"x\"\nruntime = \"native\"\nprovider = \"openai\"\nmodel = \"m\"\n"
	p, err := Parse([]byte(head + "[[policy.mcp]]\nid = \"no-drop\"\nserver = \"db\"\ntool = \"drop_*\"\nverdict = \"deny\"\n" +
		"[[policy.shell]]\nprefix = [\"curl\"]\nverdict = \"ask\"\n"))
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Policy.MCP) != 1 || p.Policy.MCP[0].Tool != "drop_*" || len(p.Policy.Shell) != 1 {
		t.Errorf("parsed %+v", p.Policy)
	}
	for text, want := range map[string]string{
		"[[policy.mcp]]\nserver = \"db\"\nverdict = \"allow\"\n":       "only tighten",
		"[[policy.mcp]]\nserver = \"db\"\nverdict = \"deny\"\nx = 1\n": "x",
		"[[policy.mcp]]\ntool = \"t\"\nverdict = \"deny\"\n":           "server",
	} {
		if _, err := Parse([]byte(head + text)); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("%q: err = %v, want %q", text, err, want)
		}
	}
}
