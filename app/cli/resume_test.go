package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"agenthub/backend/llm/llmtest"
)

// TestNativeRunKilledThenResumed is the third end-to-end variant of the
// built-in runtime: the model's edit is approved and applied, then the
// process goes away while the model is still answering; at the next start
// the run is Failed(run_interrupted) and resumable, and `runs resume`
// continues it in the same session: the model sees the applied step and
// finishes, and the run completes.
func TestNativeRunKilledThenResumed(t *testing.T) {
	srv := llmtest.NewOpenAI(
		llmtest.Turn{Text: []string{"I'll add the file."}, Calls: []llmtest.Call{writeCall("c1", "hello.txt", "hi")}},
		llmtest.Turn{Text: []string{"Now I'll think for a long"}, Hang: true},
		llmtest.Turn{Text: []string{"Resumed: hello.txt is in place. Done."}},
	)
	defer srv.Close()
	env, dir := newGitWorkspace(t)
	writeProfile(t, env, "mock", "openai", srv.URL+"/v1")

	// The first process: it ends while the second inference hangs.
	ctx, kill := context.WithCancel(t.Context())
	done := make(chan int, 1)
	var out, errOut bytes.Buffer
	go func() {
		done <- Main(Env{Args: []string{"run", "--workspace", dir, "--profile", "mock", "--on-approval", "approve",
			"--json", "add hello"}, Stdin: strings.NewReader(""), Stdout: &out, Stderr: &errOut, Context: ctx,
			Version: "test", Getenv: func(k string) string { return env[k] }})
	}()
	for deadline := time.Now().Add(20 * time.Second); len(srv.Requests()) < 2; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("the second inference never started\n%s\n%s", out.String(), errOut.String())
		}
	}
	kill()
	<-done
	if b, err := os.ReadFile(filepath.Join(dir, "hello.txt")); err != nil || string(b) != "hi" {
		t.Fatalf("the approved step did not land before the process went away: %q %v", b, err)
	}

	// The next start finds it interrupted and resumable.
	code, list, stderr := runCLI(t, env, "runs", "list", "--json")
	if code != 0 {
		t.Fatalf("runs list: %d %s", code, stderr)
	}
	var runs []struct {
		ID, SessionID string
		State         string `json:"state"`
		Resumable     bool   `json:"resumable"`
		Failure       *struct{ Code string }
	}
	if err := json.Unmarshal([]byte(list), &runs); err != nil || len(runs) != 1 {
		t.Fatalf("runs: %v %s", err, list)
	}
	if r := runs[0]; r.State != "Failed" || r.Failure == nil || r.Failure.Code != "run_interrupted" || !r.Resumable {
		t.Fatalf("after the restart: %+v", r)
	}
	code, resumed, stderr := runCLI(t, env, "runs", "resume", runs[0].ID, "--on-approval", "approve")
	if code != 0 {
		t.Fatalf("runs resume: exit %d\n%s\n%s", code, resumed, stderr)
	}
	if !strings.Contains(resumed, "Resumed: hello.txt is in place") {
		t.Fatalf("the resumed run's answer is missing:\n%s", resumed)
	}
	reqs := srv.Requests()
	last := reqs[len(reqs)-1]
	if !strings.Contains(toolMessages(last), "created hello.txt") || !strings.Contains(string(last.Raw), "AgentHub resumed this task") {
		t.Fatalf("the resumed run did not see the finished step and the note:\n%s", last.Raw)
	}

	// Resume once: the continuation is linked both ways, and a second
	// resume is refused with a stable code naming it.
	var cont, from string
	if _, err := fmt.Sscanf(resumed, "Run %s resumes %s from", &cont, &from); err != nil || from != runs[0].ID {
		t.Fatalf("no 'Run X resumes Y' line: %v\n%s", err, resumed)
	}
	code, _, stderr = runCLI(t, env, "runs", "resume", runs[0].ID, "--on-approval", "approve")
	if code != ExitFailed || !strings.Contains(stderr, "(run_already_resumed)") || !strings.Contains(stderr, cont) {
		t.Fatalf("second resume: exit %d, want 1 with run_already_resumed naming %s:\n%s", code, cont, stderr)
	}
	if _, shown, _ := runCLI(t, env, "runs", "show", runs[0].ID); !strings.Contains(shown, "resumed by") || !strings.Contains(shown, cont) {
		t.Fatalf("runs show of the interrupted run does not name its continuation:\n%s", shown)
	}
	if _, shown, _ := runCLI(t, env, "runs", "show", cont); !strings.Contains(shown, "resumes") || !strings.Contains(shown, runs[0].ID) {
		t.Fatalf("runs show of the continuation does not name the run it resumes:\n%s", shown)
	}
	_, list, _ = runCLI(t, env, "runs", "list", "--json")
	if !strings.Contains(list, `"resumedBy":"`+cont+`"`) || strings.Count(list, `"resumable":true`) != 0 {
		t.Fatalf("runs list --json: the resumed run must show resumedBy and no longer be resumable:\n%s", list)
	}
}
