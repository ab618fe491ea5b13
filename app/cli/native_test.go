package cli

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agenthub/backend/llm/llmtest"
)

// writeProfile puts a native profile pointing at srv into the data dir.
func writeProfile(t *testing.T, env map[string]string, name, provider, baseURL string) {
	t.Helper()
	putProfile(t, env, name, fmt.Sprintf("name = %q\nruntime = \"native\"\nprovider = %q\nbase_url = %q\n"+
		"model = \"test-model\"\nkey_env = \"AGENTHUB_TEST_KEY\"\n[stop]\nmax_rounds = 5\n", name, provider, baseURL))
}

// toolMessages returns the text of every tool-result message in a recorded
// OpenAI request body.
func toolMessages(req llmtest.Request) string {
	var b strings.Builder
	msgs, _ := req.Body["messages"].([]any)
	for _, m := range msgs {
		mm, _ := m.(map[string]any)
		if mm["role"] == "tool" {
			fmt.Fprintf(&b, "%v\n", mm["content"])
		}
	}
	return b.String()
}

func writeCall(id, path, content string) llmtest.Call {
	return llmtest.Call{ID: id, Name: "write_file", Args: []string{`{"path":"` + path + `",`, `"content":"` + content + `"}`}}
}

// TestNativeRunEditApprovedThenModelSeesResult is the end to end of the
// built-in runtime over the OpenAI wire format: the model asks to write a
// file, the approval is granted, the patch is applied, the model sees the
// result in its next request, and the run completes.
func TestNativeRunEditApprovedThenModelSeesResult(t *testing.T) {
	srv := llmtest.NewOpenAI(
		llmtest.Turn{Text: []string{"I'll add ", "the file."}, Calls: []llmtest.Call{writeCall("c1", "hello.txt", "hi")}},
		llmtest.Turn{Text: []string{"Done."}},
	)
	defer srv.Close()
	env, dir := newGitWorkspace(t)
	writeProfile(t, env, "mock", "openai", srv.URL+"/v1")
	code, out, errOut := runCLI(t, env, "run", "--workspace", dir, "--profile", "mock", "--on-approval", "approve", "add hello")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "hello.txt")); err != nil || string(b) != "hi" {
		t.Fatalf("hello.txt: %q %v", b, err)
	}
	reqs := srv.Requests()
	if len(reqs) != 2 || !strings.Contains(toolMessages(reqs[1]), "created hello.txt") {
		t.Fatalf("the model did not see the applied patch: %d requests\n%s", len(reqs), toolMessages(reqs[len(reqs)-1]))
	}
	if tools, _ := reqs[0].Body["tools"].([]any); len(tools) < 5 {
		t.Fatalf("the model was offered %d tools", len(tools))
	}
	if !strings.Contains(out, "agent: I'll add the file.") {
		t.Fatalf("streamed text not merged: %s", out)
	}
}

func TestNativeRunRejectTellsTheModel(t *testing.T) {
	srv := llmtest.NewOpenAI(
		llmtest.Turn{Calls: []llmtest.Call{writeCall("c1", "hello.txt", "hi")}},
		llmtest.Turn{Text: []string{"Understood, I will not write it."}},
	)
	defer srv.Close()
	env, dir := newGitWorkspace(t)
	writeProfile(t, env, "mock", "openai", srv.URL+"/v1")
	code, out, errOut := runCLI(t, env, "run", "--workspace", dir, "--profile", "mock", "--on-approval", "reject", "add hello")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if _, err := os.Stat(filepath.Join(dir, "hello.txt")); !os.IsNotExist(err) {
		t.Fatal("a rejected write happened")
	}
	if got := toolMessages(srv.Requests()[1]); !strings.Contains(got, "rejected") {
		t.Fatalf("the model was not told about the rejection: %s", got)
	}
}

// TestNativeRunBadModelOutput: invalid JSON arguments and an unknown tool
// become tool errors the model sees; the run goes on and completes.
func TestNativeRunBadModelOutput(t *testing.T) {
	srv := llmtest.NewOpenAI(
		llmtest.Turn{Calls: []llmtest.Call{{ID: "c1", Name: "read_file", Args: []string{`{"path": `}},
			{ID: "c2", Name: "no_such_tool", Args: []string{`{}`}}}},
		llmtest.Turn{Text: []string{"I see the errors."}},
	)
	defer srv.Close()
	env, dir := newGitWorkspace(t)
	writeProfile(t, env, "mock", "openai", srv.URL+"/v1")
	code, out, errOut := runCLI(t, env, "run", "--workspace", dir, "--profile", "mock", "look")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	got := toolMessages(srv.Requests()[1])
	if !strings.Contains(got, "invalid arguments") || !strings.Contains(got, "no_such_tool") {
		t.Fatalf("tool errors not shown to the model:\n%s", got)
	}
}

func TestNativeRunProviderErrorsFailClearly(t *testing.T) {
	srv := llmtest.NewOpenAI(llmtest.Turn{Status: 401, Body: llmtest.OpenAIError("invalid_request_error", "invalid_api_key", "bad key sk-secret")})
	defer srv.Close()
	env, dir := newGitWorkspace(t)
	writeProfile(t, env, "mock", "openai", srv.URL+"/v1")
	code, out, errOut := runCLI(t, env, "run", "--workspace", dir, "--profile", "mock", "look")
	if code != ExitFailed || !strings.Contains(out, "runtime_unavailable") || !strings.Contains(out, "API key") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if strings.Contains(out+errOut, "sk-secret") {
		t.Fatal("provider text with a key fragment was shown")
	}
}

func TestNativeRunAnthropic(t *testing.T) {
	srv := llmtest.NewAnthropic(
		llmtest.Turn{Text: []string{"Writing."}, Calls: []llmtest.Call{writeCall("toolu_1", "notes.md", "# notes")}},
		llmtest.Turn{Text: []string{"Written."}},
	)
	defer srv.Close()
	env, dir := newGitWorkspace(t)
	writeProfile(t, env, "claude-mock", "anthropic", srv.URL)
	code, out, errOut := runCLI(t, env, "run", "--workspace", dir, "--profile", "claude-mock", "--on-approval", "approve", "notes")
	if code != 0 {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
	if b, err := os.ReadFile(filepath.Join(dir, "notes.md")); err != nil || string(b) != "# notes" {
		t.Fatalf("notes.md: %q %v", b, err)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Fatalf("%d requests, want 2", n)
	}
}

func TestProfilesList(t *testing.T) {
	env, _ := newGitWorkspace(t)
	writeProfile(t, env, "local", "openai", "http://127.0.0.1:11434/v1")
	broken := filepath.Join(env["AGENTHUB_HOME"], "profiles", "broken.toml")
	if err := os.WriteFile(broken, []byte("name = \"b\"\nruntime = \"native\"\nprovider = \"openai\"\nmodle = \"x\"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	code, out, errOut := runCLI(t, env, "profiles")
	if code != 0 || !strings.Contains(out, "demo") || !strings.Contains(out, "scripted, not an AI model (default)") ||
		!strings.Contains(out, "openai:test-model") || !strings.Contains(errOut, "broken.toml") {
		t.Fatalf("exit %d\n%s\n%s", code, out, errOut)
	}
}
