package keychain

import (
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/zalando/go-keyring"

	"agenthub/backend"
)

func TestParseRef(t *testing.T) {
	tests := []struct {
		in      string
		want    Ref
		wantErr bool
	}{
		{"agenthub/openai", Ref{"agenthub", "openai"}, false},
		{"svc/team/acct", Ref{"svc", "team/acct"}, false},
		{"noslash", Ref{}, true},
		{"/acct", Ref{}, true},
		{"svc/", Ref{}, true},
		{"svc /acct", Ref{}, true},
	}
	for _, tt := range tests {
		got, err := ParseRef(tt.in)
		if (err != nil) != tt.wantErr || got != tt.want {
			t.Errorf("ParseRef(%q) = %+v, %v", tt.in, got, err)
		}
	}
}

// childEnv marks the re-executed test binary that runs inside a private
// D-Bus session with a real Secret Service (gnome-keyring).
const childEnv = "AGENTHUB_KEYRING_CHILD"

// TestSecretService reads keys through go-keyring's real Secret Service
// provider: the test binary re-executes itself under dbus-run-session with
// an unlocked gnome-keyring daemon in a throwaway home, so no keychain of
// the machine is touched. scripts/deps.sh test installs both programs; in
// CI their absence fails the test.
func TestSecretService(t *testing.T) {
	if os.Getenv(childEnv) == "1" {
		secretServiceChild(t)
		return
	}
	for _, bin := range []string{"dbus-run-session", "gnome-keyring-daemon"} {
		if _, err := exec.LookPath(bin); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s is missing: scripts/deps.sh test installs it", bin)
			}
			t.Skipf("%s is missing (scripts/deps.sh test installs it)", bin)
		}
	}
	home := t.TempDir()
	script := `printf agenthub-test | gnome-keyring-daemon --unlock --components=secrets --daemonize >"$HOME/kr.env" && ` +
		`. "$HOME/kr.env" && export GNOME_KEYRING_CONTROL SSH_AUTH_SOCK; exec "$0" -test.run='^TestSecretService$' -test.v`
	cmd := exec.CommandContext(t.Context(), "dbus-run-session", "--", "sh", "-c", script, os.Args[0])
	cmd.Env = append(os.Environ(), childEnv+"=1", "HOME="+home, "XDG_DATA_HOME="+filepath.Join(home, "data"),
		"XDG_RUNTIME_DIR="+home)
	out, err := cmd.CombinedOutput()
	if err != nil || !strings.Contains(string(out), "--- PASS: TestSecretService") {
		t.Fatalf("secret service child: %v\n%s", err, out)
	}
}

func secretServiceChild(t *testing.T) {
	ref := Ref{Service: "agenthub-test", Account: "openai"}
	if err := keyring.Set(ref.Service, ref.Account, "sk-real-secret-service"); err != nil {
		t.Fatalf("store through the Secret Service: %v", err)
	}
	got, err := Get(ref)
	if err != nil || got != "sk-real-secret-service" {
		t.Fatalf("Get = %q, %v", got, err)
	}
	checkMissing(t, Ref{Service: "agenthub-test", Account: "absent"})
}

// checkMissing: a missing entry is runtime_unavailable, names the entry and
// the next step, and never carries a key.
func checkMissing(t *testing.T, ref Ref) {
	t.Helper()
	_, err := Get(ref)
	var be *backend.Error
	if !errors.As(err, &be) || be.Code != backend.FailRuntimeUnavailable || be.Detail != "keychain" {
		t.Fatalf("missing entry: %v", err)
	}
	if !strings.Contains(be.Message, ref.Account) || !strings.HasPrefix(be.Next, "Store it") ||
		!strings.Contains(be.Next, ref.Account) || strings.Contains(be.Message, "Store it") {
		t.Errorf("message %q, next %q", be.Message, be.Next)
	}
}

// TestMockProvider covers the same lookup path with go-keyring's in-memory
// provider, so it runs everywhere.
func TestMockProvider(t *testing.T) {
	keyring.MockInit()
	if err := keyring.Set("svc", "acct", "sk-mock"); err != nil {
		t.Fatal(err)
	}
	if got, err := Get(Ref{"svc", "acct"}); err != nil || got != "sk-mock" {
		t.Fatalf("Get = %q, %v", got, err)
	}
	checkMissing(t, Ref{"svc", "other"})
	keyring.MockInitWithError(errors.New("dbus: no session bus"))
	_, err := Get(Ref{"svc", "acct"})
	var be *backend.Error
	if !errors.As(err, &be) || be.Code != backend.FailRuntimeUnavailable || !strings.HasPrefix(be.Next, "Unlock the keychain") {
		t.Errorf("unreachable keychain: %v", err)
	}
}
