package cli

import (
	"bufio"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"agenthub/backend"
	"agenthub/backend/llm/llmtest"
	"agenthub/backend/runtime/acp/acptest"
	"agenthub/backend/runtime/codex/codextest"
)

// Issue 14 item 10: local mode makes no network connection except to the
// configured model endpoint, whatever the runtime. TestAgentCLIsStayOffline
// runs one approved write per real agent CLI inside a network namespace
// that has only loopback (unshare -n), under strace, which records every
// connect, sendto, sendmsg and sendmmsg of AgentHub and of every process it
// starts (and every execve, to name them). Only the scripted model server's
// port on loopback may be contacted: no DNS lookup, no other port, no
// other host, no name-service socket. The run itself happens in
// TestOfflineChild, the test binary re-executed inside the namespace.

// offlineChildEnv names the runtime the child runs; offlinePortEnv the
// file it writes the model server's port to.
const (
	offlineChildEnv = "AGENTHUB_OFFLINE_CHILD"
	offlinePortEnv  = "AGENTHUB_OFFLINE_PORT_FILE"
)

func TestAgentCLIsStayOffline(t *testing.T) {
	t.Parallel()
	for _, tool := range []string{"unshare", "strace", "ip"} {
		if _, err := exec.LookPath(tool); err != nil {
			offlineUnavailable(t, tool+" is not installed (scripts/deps.sh test installs strace and iproute2)")
		}
	}
	if os.Geteuid() != 0 {
		offlineUnavailable(t, "a network namespace needs root (unshare -n)")
	}
	if out, err := exec.Command("unshare", "-n", "true").CombinedOutput(); err != nil {
		offlineUnavailable(t, fmt.Sprintf("unshare -n is not permitted here: %v %s", err, out))
	}
	runtimes := []struct {
		name string
		cli  pinned
	}{{"claude", claudeCLI}, {"codex", codexCLI}, {"gemini", geminiCLI}}
	for _, rt := range runtimes {
		t.Run(rt.name, func(t *testing.T) {
			t.Parallel()
			bin := rt.cli.path(t)
			tmp := t.TempDir()
			trace, portFile := filepath.Join(tmp, "strace.log"), filepath.Join(tmp, "port")
			cmd := exec.Command("unshare", "-n", "--", "sh", "-c",
				`ip link set lo up && exec strace -f -qq --seccomp-bpf -e signal=none -s 256 `+
					`-e trace=connect,sendto,sendmsg,sendmmsg,execve,clone,clone3,fork,vfork -o "$0" "$@"`,
				trace, os.Args[0], "-test.run", "^TestOfflineChild$", "-test.count", "1", "-test.v", "-test.timeout", "5m")
			cmd.Env = append(os.Environ(), offlineChildEnv+"="+rt.name, offlinePortEnv+"="+portFile, rt.cli.env+"="+bin)
			out, err := cmd.CombinedOutput()
			if err != nil || !strings.Contains(string(out), "--- PASS: TestOfflineChild") {
				t.Fatalf("the run in the network namespace failed: %v\n%s", err, tail(string(out), 4000))
			}
			port, err := os.ReadFile(portFile)
			if err != nil {
				t.Fatal(err)
			}
			log, err := os.ReadFile(trace)
			if err != nil {
				t.Fatal(err)
			}
			attempts := parseStrace(string(log))
			var toModel int
			for _, a := range attempts {
				switch {
				case a.loopback() && a.Port == strings.TrimSpace(string(port)):
					toModel++
				case a.Family == "AF_UNIX" && !nameService(a.Path):
					// A local socket of the CLI's own (its helper processes).
				default:
					t.Errorf("%s (pid %d) contacted %s", a.Program, a.PID, a)
				}
			}
			if toModel == 0 {
				t.Fatalf("no connection to the model server was seen: the trace cannot see connections\n%s",
					tail(string(log), 2000))
			}
		})
	}
}

// offlineUnavailable skips where the machine cannot make a network
// namespace, and fails under CI, where it must.
func offlineUnavailable(t *testing.T, why string) {
	t.Helper()
	if os.Getenv("CI") != "" {
		t.Fatal(why)
	}
	t.Skip(why)
}

// TestOfflineChild is the run TestAgentCLIsStayOffline observes: one
// approved write by the real CLI against a scripted model server on
// loopback, inside the namespace.
func TestOfflineChild(t *testing.T) {
	rt := os.Getenv(offlineChildEnv)
	if rt == "" {
		t.Skip("runs only inside TestAgentCLIsStayOffline's network namespace")
	}
	env, dir := newGitWorkspace(t)
	var url string
	switch rt {
	case "claude":
		srv := llmtest.NewAnthropic(
			llmtest.Turn{Calls: []llmtest.Call{ccCall("toolu_1", "Write", map[string]any{"file_path": dir + "/hello.txt",
				"content": "hello\n"})}},
			llmtest.Turn{Text: []string{"Done."}})
		t.Cleanup(srv.Close)
		writeClaudeProfile(t, env, claudeCLI.path(t), srv.URL)
		url = srv.URL
	case "codex":
		srv := codextest.New(codextest.Turn{Calls: []codextest.Call{codextest.ApplyPatch("call_p1", addHello)}},
			codextest.Turn{Text: []string{"Done."}})
		t.Cleanup(srv.Close)
		writeCodexProfile(t, env, codexCLI.path(t), srv.URL, "")
		url = srv.URL
	case "gemini":
		srv := acptest.NewGemini(acptest.Turn{Calls: []acptest.Call{write(dir, "hello.txt", "hello\n")}},
			acptest.Turn{Text: []string{"Done."}})
		t.Cleanup(srv.Close)
		writeACPProfile(t, env, geminiProfile(geminiCLI.path(t), srv.URL))
		url = srv.URL
	default:
		t.Fatalf("unknown runtime %q", rt)
	}
	_, port, _ := strings.Cut(strings.TrimPrefix(url, "http://"), ":")
	if err := os.WriteFile(os.Getenv(offlinePortEnv), []byte(port), 0o600); err != nil {
		t.Fatal(err)
	}
	profile := map[string]string{"claude": "cc", "codex": "cx", "gemini": "gm"}[rt]
	evs := runTask(t, env, dir, profile, "approve")
	if !hasType(evs, backend.EvRunCompleted) {
		t.Fatalf("the run did not complete: %s", evs[len(evs)-1].Type)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "hello.txt")); err != nil || string(b) != "hello\n" {
		t.Fatalf("hello.txt: %q %v", b, err)
	}
}

// attempt is one connection or datagram strace saw.
type attempt struct {
	PID     int
	Program string // the last program the pid executed
	Call    string
	Family  string
	Addr    string
	Port    string
	Path    string // AF_UNIX
	Query   string // the name a DNS query asks for, when the trace shows it
}

func (a attempt) loopback() bool {
	return (a.Family == "AF_INET" && strings.HasPrefix(a.Addr, "127.")) || (a.Family == "AF_INET6" && a.Addr == "::1")
}

func (a attempt) String() string {
	if a.Family == "AF_UNIX" {
		return fmt.Sprintf("%s %s %q", a.Call, a.Family, a.Path)
	}
	s := fmt.Sprintf("%s %s %s port %s", a.Call, a.Family, a.Addr, a.Port)
	if a.Query != "" {
		s += " (DNS query for " + a.Query + ")"
	}
	return s
}

// nameService reports whether a local socket is a resolver's: a DNS lookup
// in disguise. nscd is not: every shell asks it for the user's passwd
// entry, and a host lookup through it would still end in a datagram to a
// name server when nscd is missing, which the trace sees.
func nameService(path string) bool {
	for _, s := range []string{"resolve", "dnsmasq", "unbound"} {
		if strings.Contains(path, s) {
			return true
		}
	}
	return false
}

var (
	straceLine = regexp.MustCompile(`^(\d+)\s+(connect|sendto|sendmsg|sendmmsg|execve)\((.*)$`)
	forkLine   = regexp.MustCompile(`^(\d+)\s+(?:<\.\.\. )?(?:clone3?|fork|vfork)\b.*= (\d+)$`)
	octal      = regexp.MustCompile(`\\[0-9x]{1,3}`)
	dnsName    = regexp.MustCompile(`(?:\\[0-9x]{1,3}|[^\\])((?:[a-z0-9-]{1,63}\\[0-9x]{1,3}){1,}[a-z]{2,})\\0`)
	execPath   = regexp.MustCompile(`^"([^"]*)"`)
	family     = regexp.MustCompile(`sa_family=(AF_[A-Z0-9]+)`)
	inetAddr   = regexp.MustCompile(`sin_port=htons\((\d+)\), sin_addr=inet_addr\("([^"]+)"\)`)
	inet6Addr  = regexp.MustCompile(`sin6_port=htons\((\d+)\).*inet_pton\(AF_INET6, "([^"]+)"`)
	unixPath   = regexp.MustCompile(`sun_path=@?"([^"]*)"`)
)

// parseStrace reads strace -f -o output: every connect and every datagram
// sent to an address, by pid, named by the program the pid executed. A
// sendto on a connected socket names no address and is covered by its
// connect; netlink is the kernel, not the network.
func parseStrace(log string) []attempt {
	programs := map[int]string{}
	var out []attempt
	sc := bufio.NewScanner(strings.NewReader(log))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		if f := forkLine.FindStringSubmatch(sc.Text()); f != nil {
			parent, _ := strconv.Atoi(f[1])
			child, _ := strconv.Atoi(f[2])
			if _, ok := programs[child]; !ok {
				programs[child] = programs[parent]
			}
			continue
		}
		m := straceLine.FindStringSubmatch(sc.Text())
		if m == nil {
			continue
		}
		pid, _ := strconv.Atoi(m[1])
		if m[2] == "execve" {
			if p := execPath.FindStringSubmatch(m[3]); p != nil {
				programs[pid] = filepath.Base(p[1])
			}
			continue
		}
		f := family.FindStringSubmatch(m[3])
		if f == nil || f[1] == "AF_NETLINK" {
			continue
		}
		a := attempt{PID: pid, Program: programs[pid], Call: m[2], Family: f[1]}
		switch f[1] {
		case "AF_INET":
			if p := inetAddr.FindStringSubmatch(m[3]); p != nil {
				a.Port, a.Addr = p[1], p[2]
			}
			if q := dnsName.FindStringSubmatch(m[3]); q != nil && a.Port == "53" {
				a.Query = octal.ReplaceAllString(q[1], ".")
			}
		case "AF_INET6":
			if p := inet6Addr.FindStringSubmatch(m[3]); p != nil {
				a.Port, a.Addr = p[1], p[2]
			}
		case "AF_UNIX":
			if p := unixPath.FindStringSubmatch(m[3]); p != nil {
				a.Path = p[1]
			}
		}
		if a.Program == "" {
			a.Program = "AgentHub"
		}
		out = append(out, a)
	}
	return out
}

func tail(s string, n int) string {
	if len(s) > n {
		return "…" + s[len(s)-n:]
	}
	return s
}

func TestParseStrace(t *testing.T) {
	log := `100 execve("/opt/codex/bin/codex", ["codex", "app-server"], 0x7ffd /* 9 vars */) = 0
100 connect(7, {sa_family=AF_INET, sin_port=htons(41234), sin_addr=inet_addr("127.0.0.1")}, 16) = 0
100 clone3({flags=CLONE_VM|CLONE_VFORK, exit_signal=SIGCHLD, stack=0x7f, stack_size=0x9000}, 88 <unfinished ...>
100 <... clone3 resumed>) = 105
105 sendto(9, "\x12\x34\1\0\0\1\0\0\0\0\0\0\3api\6github\3com\0\0\1\0\1", 31, MSG_NOSIGNAL, {sa_family=AF_INET, sin_port=htons(53), sin_addr=inet_addr("10.255.255.53")}, 16) = -1 ENETUNREACH (Network is unreachable)
101 connect(8, {sa_family=AF_INET6, sin6_port=htons(443), sin6_flowinfo=htonl(0), inet_pton(AF_INET6, "2606:4700::1", &sin6_addr), sin6_scope_id=0}, 28 <unfinished ...>
102 connect(3, {sa_family=AF_UNIX, sun_path="/run/systemd/resolve/io.systemd.Resolve"}, 110) = -1 ENOENT (No such file or directory)
103 sendto(4, {{len=20, type=RTM_GETADDR, flags=NLM_F_REQUEST|NLM_F_DUMP, seq=1, pid=0}, {ifa_family=AF_UNSPEC}}, 20, 0, {sa_family=AF_NETLINK, nl_pid=0, nl_groups=00000000}, 12) = 20
104 sendto(5, "x", 1, 0, NULL, 0) = 1
`
	got := parseStrace(log)
	want := []string{
		"codex connect AF_INET 127.0.0.1 port 41234",
		"codex sendto AF_INET 10.255.255.53 port 53 (DNS query for api.github.com)",
		"AgentHub connect AF_INET6 2606:4700::1 port 443",
		`AgentHub connect AF_UNIX "/run/systemd/resolve/io.systemd.Resolve"`,
	}
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i, a := range got {
		if s := a.Program + " " + a.String(); s != want[i] {
			t.Errorf("attempt %d = %q, want %q", i, s, want[i])
		}
	}
	if !got[0].loopback() || got[1].loopback() || !nameService(got[3].Path) {
		t.Errorf("classification: %v", got)
	}
}
