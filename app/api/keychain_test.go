package api

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/zalando/go-keyring"

	"agenthub/backend"
	"agenthub/backend/llm/llmtest"
)

// TestKeychainKey runs a native profile whose key is a keychain reference,
// with go-keyring's in-memory provider (the real Secret Service is tested in
// backend/keychain): a missing entry fails the run with runtime_unavailable
// and the next step; once the entry exists the next run sends it, without a
// restart; the key is in neither the database nor the profile.
func TestKeychainKey(t *testing.T) {
	keyring.MockInit()
	srv := llmtest.NewOpenAI(llmtest.Turn{Text: []string{"hello"}})
	defer srv.Close()
	home := t.TempDir()
	if err := os.MkdirAll(filepath.Join(home, ProfilesDir), 0o700); err != nil {
		t.Fatal(err)
	}
	prof := "name = \"kc\"\nruntime = \"native\"\nprovider = \"openai\"\nmodel = \"m\"\n" +
		"base_url = \"" + srv.URL + "/v1\"\nkeychain = \"agenthub-test/openai\"\n"
	if err := os.WriteFile(filepath.Join(home, ProfilesDir, "kc.toml"), []byte(prof), 0o600); err != nil {
		t.Fatal(err)
	}
	core, err := Open(t.Context(), Config{Home: home, Version: "test", Surface: backend.SurfaceCLI})
	if err != nil {
		t.Fatal(err)
	}
	defer core.Close()
	ws, err := NewWorkspacesAPI(core).Add(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	runs := NewRunsAPI(core)

	missing := runToEnd(t, runs, ws.ID)
	if missing.State != backend.RunFailed || missing.Failure == nil || missing.Failure.Code != backend.FailRuntimeUnavailable ||
		!strings.HasPrefix(missing.Failure.Next, "Store it") || !strings.Contains(missing.Failure.Message, "agenthub-test") {
		t.Fatalf("missing entry: %+v %+v", missing, missing.Failure)
	}
	if n := len(srv.Requests()); n != 0 {
		t.Fatalf("%d requests without a key", n)
	}
	evs, _ := runs.Events(missing.ID, 0, 0)
	if len(evs) < 2 || evs[len(evs)-2].Type != backend.EvRuntimeUnavailable {
		t.Errorf("runtime.unavailable does not precede run.failed")
	}

	const key = "sk-keychain-0123456789abcdef"
	if err := keyring.Set("agenthub-test", "openai", key); err != nil {
		t.Fatal(err)
	}
	ok := runToEnd(t, runs, ws.ID)
	if ok.State != backend.RunCompleted {
		t.Fatalf("with the key: %+v %+v", ok, ok.Failure)
	}
	if got := srv.Requests()[0].Header.Get("Authorization"); got != "Bearer "+key {
		t.Errorf("Authorization %q", got)
	}
	core.Close()
	for _, f := range []string{filepath.Join(home, ProfilesDir, "kc.toml")} {
		if b, _ := os.ReadFile(f); bytes.Contains(b, []byte(key)) {
			t.Errorf("%s holds the key", f)
		}
	}
	_ = filepath.Walk(home, func(path string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			if b, _ := os.ReadFile(path); bytes.Contains(b, []byte(key)) {
				t.Errorf("%s holds the key", path)
			}
		}
		return nil
	})
}

func runToEnd(t *testing.T, runs *RunsAPI, wsID string) backend.RunSummary {
	t.Helper()
	r, err := runs.Start(StartRun{WorkspaceID: wsID, Profile: "kc", Task: "hi"})
	if err != nil {
		t.Fatal(err)
	}
	for deadline := time.Now().Add(15 * time.Second); time.Now().Before(deadline); time.Sleep(10 * time.Millisecond) {
		if r, err = runs.Get(r.ID); err == nil && r.State.Terminal() {
			return r
		}
	}
	t.Fatalf("run %s did not end: %+v", r.ID, r)
	return r
}
