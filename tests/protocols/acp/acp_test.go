package acp

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"agenthub/tests/protocols/protocoltest"
)

// summary is what drive.mjs saw as the editor (its last line of stdout).
type summary struct {
	AgentInfo    struct{ Name string }
	OutsideError struct {
		Code int
		Data struct{ Code, Message, Next string }
	}
	First, Second struct {
		StopReason string
		Meta       struct {
			Agenthub struct{ RunID, SessionID string }
		}
	}
	LeftAt      string // the question open when the editor went away
	Exit        struct{ Code *int }
	LoadSession bool
	// UnknownLoadError is the answer to loading a session that never was.
	UnknownLoadError struct {
		Data struct{ Code string }
	}
	LoadExit    struct{ Code *int }
	Permissions []struct {
		Phase, Title, Kind, Chosen string
		ApprovedElsewhere          string
		Options                    []struct{ ID, Kind string }
		Content                    []struct {
			Type             string
			Path             string
			OldText, NewText *string
			Content          struct{ Text string }
		}
	}
	Updates   []map[string]any
	SDKErrors []string `json:"sdkErrors"`
}

// auditEntry is one line of `agenthub audit export`.
type auditEntry struct {
	Surface     string
	Kind        string
	RunID       string
	SubjectHash string
	Data        json.RawMessage
}

// decisionData is the data of an approval.resolved entry; transitionData
// that of a run.transition.
type (
	decisionData struct {
		Decision string
		Reason   string
		Hunks    []struct {
			Path  string
			Index int
		}
	}
	transitionData struct{ DoneReason, To string }
)

// TestOfficialClientDrivesAgentHub builds agenthub, allowlists a temporary
// git repository in a temporary data directory and lets the official ACP
// client (drive.mjs) run a playbook through `agenthub acp`: an approval,
// a rejection, a partial approval, a command, then a cancelled prompt.
// The editor's view is checked here from the script's summary, then what
// happened: the files on disk and the audit trail.
func TestOfficialClientDrivesAgentHub(t *testing.T) {
	here, err := filepath.Abs(".")
	if err != nil {
		t.Fatal(err)
	}
	node := protocoltest.RequireNode(t, here, "@agentclientprotocol/sdk")
	root := filepath.Join(here, "..", "..", "..")
	bin := filepath.Join(t.TempDir(), "agenthub")
	args := []string{"build", "-tags", "sqlite_fts5", "-o", bin}
	if raceBuild {
		args = append(args, "-race")
	}
	build := exec.Command("go", append(args, ".")...)
	build.Dir = root
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("build agenthub: %v\n%s", err, out)
	}

	home, ws, outside := t.TempDir(), protocoltest.GitWorkspace(t, "story.txt", 20), t.TempDir()
	env := append(protocoltest.WithoutAgentHubVars(os.Environ()), "AGENTHUB_HOME="+home, "AGENTHUB_ENGINE_START_TIMEOUT=120s")
	cli := func(args ...string) string {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		defer cancel()
		cmd := exec.CommandContext(ctx, bin, args...)
		cmd.Env = env
		var stderr bytes.Buffer
		cmd.Stderr = &stderr
		out, err := cmd.Output()
		if err != nil {
			t.Fatalf("agenthub %s: %v\n%s%s", strings.Join(args, " "), err, out, stderr.String())
		}
		return string(out)
	}
	cli("workspace", "add", ws)
	t.Cleanup(func() {
		cmd := exec.Command(bin, "engine", "stop")
		cmd.Env = env
		_ = cmd.Run()
	})

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	drive := exec.CommandContext(ctx, node, "drive.mjs")
	drive.Dir = here
	drive.Env = append(env, "AGENTHUB_BIN="+bin, "ACP_WORKSPACE="+ws, "ACP_OUTSIDE="+outside,
		"ACP_PLAYBOOK="+filepath.Join(here, "testdata", "approvals.toml"))
	var stderr bytes.Buffer
	drive.Stderr = &stderr
	out, err := drive.Output()
	if err != nil {
		t.Fatalf("drive.mjs: %v\nstdout:\n%s\nstderr:\n%s", err, out, stderr.String())
	}
	var s summary
	lines := strings.Split(strings.TrimSpace(string(out)), "\n")
	if err := json.Unmarshal([]byte(lines[len(lines)-1]), &s); err != nil {
		t.Fatalf("drive.mjs summary: %v\n%s\nstderr:\n%s", err, out, stderr.String())
	}

	t.Run("editor view", func(t *testing.T) { checkEditorView(t, s, ws) })
	t.Run("session load", func(t *testing.T) { checkLoad(t, s) })
	t.Run("workspace", func(t *testing.T) { checkWorkspace(t, ws) })
	t.Run("audit", func(t *testing.T) {
		checkAudit(t, s, cli("audit", "export"))
		cli("audit", "verify")
	})
	t.Run("no data race in the engine", func(t *testing.T) {
		// The command runs inside the engine; a race build reports there.
		if log, err := os.ReadFile(filepath.Join(home, "engine.log")); err == nil && bytes.Contains(log, []byte("DATA RACE")) {
			t.Errorf("engine.log reports a data race:\n%s", log)
		}
		if strings.Contains(stderr.String(), "DATA RACE") {
			t.Errorf("agenthub acp reports a data race:\n%s", stderr.String())
		}
	})
	t.Run("a run goes on when the editor goes away", func(t *testing.T) {
		var pending []struct{ ApprovalID, RunID, Title string }
		if err := json.Unmarshal([]byte(cli("approvals", "list", "--json")), &pending); err != nil {
			t.Fatal(err)
		}
		if len(pending) != 1 || pending[0].Title != s.LeftAt || s.LeftAt == "" {
			t.Fatalf("pending approvals %+v, want the one the editor left open (%q)", pending, s.LeftAt)
		}
		var r struct{ State string }
		if err := json.Unmarshal([]byte(cli("runs", "show", pending[0].RunID, "--json")), &r); err != nil {
			t.Fatal(err)
		}
		if r.State != "NeedsApproval" {
			t.Errorf("the run the editor left is %s, want NeedsApproval (waiting in the engine)", r.State)
		}
	})
	t.Run("runs are engine runs", func(t *testing.T) {
		for run, want := range map[string]string{s.First.Meta.Agenthub.RunID: "Completed", s.Second.Meta.Agenthub.RunID: "Cancelled"} {
			var r struct{ State, SessionID string }
			if err := json.Unmarshal([]byte(cli("runs", "show", run, "--json")), &r); err != nil {
				t.Fatal(err)
			}
			if r.State != want || r.SessionID != s.First.Meta.Agenthub.SessionID {
				t.Errorf("run %s: state %s session %s, want %s in the prompt's session %s", run, r.State, r.SessionID, want,
					s.First.Meta.Agenthub.SessionID)
			}
		}
	})
}

func checkEditorView(t *testing.T, s summary, ws string) {
	if len(s.SDKErrors) > 0 {
		t.Errorf("the ACP client reported errors (a message it refused?): %q", s.SDKErrors)
	}
	if s.Exit.Code == nil || *s.Exit.Code != 0 {
		t.Errorf("agenthub acp exited %v after stdin closed, want 0", s.Exit.Code)
	}
	if s.AgentInfo.Name != "agenthub" {
		t.Errorf("agentInfo.name %q", s.AgentInfo.Name)
	}
	if e := s.OutsideError; e.Data.Code != "workspace_outside_allowlist" || !strings.Contains(e.Data.Next, "agenthub workspace add") {
		t.Errorf("session/new outside the allowlist: %+v, want workspace_outside_allowlist and the command that adds it", e)
	}
	if s.First.StopReason != "end_turn" || s.Second.StopReason != "cancelled" {
		t.Errorf("stop reasons %q, %q; want end_turn, cancelled", s.First.StopReason, s.Second.StopReason)
	}
	var titles []string
	for _, p := range s.Permissions {
		titles = append(titles, p.Phase+": "+p.Title+" → "+p.Chosen)
	}
	// The first answer names an option never offered: it decides nothing
	// and the same question comes again.
	want := []string{"decide: Create notes.txt → hunks:7", "decide: Create notes.txt → allow_once",
		"decide: Create rejected.txt → reject", "decide: Edit story.txt → hunks:1", "decide: Run: echo hello → reject"}
	if len(titles) != 7 || !slices.Equal(titles[:5], want) || s.Permissions[5].Phase != "cancel" ||
		s.Permissions[5].Chosen != "cancelled" || s.Permissions[6].Phase != "leave" {
		t.Fatalf("permission requests:\n%s\nwant %s, then one cancelled, then one left open", strings.Join(titles, "\n"),
			strings.Join(want, "\n"))
	}
	asked := s.Permissions[1:5] // the four questions as finally answered
	notes := asked[0]
	if len(notes.Content) != 1 || notes.Content[0].Type != "diff" || notes.Content[0].Path != filepath.Join(ws, "notes.txt") ||
		notes.Content[0].OldText != nil || notes.Content[0].NewText == nil || *notes.Content[0].NewText != "approved\n" {
		t.Errorf("the notes.txt request shows %+v, want the new file's diff", notes.Content)
	}
	var diffs []string
	for _, c := range asked[2].Content {
		if c.Type == "diff" && c.OldText != nil && c.NewText != nil {
			diffs = append(diffs, *c.OldText+"→"+*c.NewText)
		}
	}
	if len(diffs) != 2 || !strings.HasPrefix(diffs[0], "line 1\n") || !strings.Contains(diffs[0], "→LINE 1\n") ||
		!strings.HasSuffix(diffs[1], "LINE 20\n") {
		t.Errorf("the story.txt request shows diffs %q, want its two hunks", diffs)
	}
	shell := asked[3]
	if shell.ApprovedElsewhere == "" {
		t.Errorf("the command was not approved from the CLI while the editor's dialog was open")
	}
	if shell.Kind != "execute" || len(shell.Content) == 0 || !strings.Contains(shell.Content[0].Content.Text, "$ echo hello") {
		t.Errorf("the command request shows kind %s, %+v", shell.Kind, shell.Content)
	}
	var text strings.Builder
	status := map[string]string{}
	for _, u := range s.Updates {
		if u["phase"] != "decide" {
			continue
		}
		switch u["sessionUpdate"] {
		case "agent_message_chunk":
			text.WriteString(u["content"].(map[string]any)["text"].(string))
		case "tool_call", "tool_call_update":
			if st, ok := u["status"].(string); ok {
				status[u["toolCallId"].(string)] = st
			}
		}
	}
	if !strings.Contains(text.String(), "Writing notes.txt.") || !strings.HasSuffix(text.String(), "Done.") {
		t.Errorf("streamed text %q", text.String())
	}
	if !strings.Contains(text.String(), `AgentHub refused the decision on "Create notes.txt"`) ||
		!strings.Contains(text.String(), "(invalid_input)") {
		t.Errorf("the editor was not told why its answer hunks:7 changed nothing: %q", text.String())
	}
	for i, want := range []string{"completed", "failed", "completed", "completed"} {
		id := toolCallID(s, asked[i].Title)
		if status[id] != want {
			t.Errorf("tool call %s (%s) ended %q, want %q", id, asked[i].Title, status[id], want)
		}
	}
}

// checkLoad: a restarted editor loading the session sees its three prompts
// and what their runs said and did, in order.
func checkLoad(t *testing.T, s summary) {
	if !s.LoadSession {
		t.Errorf("initialize does not advertise loadSession")
	}
	if s.LoadExit.Code == nil || *s.LoadExit.Code != 0 {
		t.Errorf("the second agenthub acp exited %v, want 0", s.LoadExit.Code)
	}
	if s.UnknownLoadError.Data.Code != "not_found" {
		t.Errorf("loading an unknown session: %+v, want not_found", s.UnknownLoadError)
	}
	var transcript []string
	for _, u := range s.Updates {
		if u["phase"] != "load" {
			continue
		}
		switch u["sessionUpdate"] {
		case "user_message_chunk":
			transcript = append(transcript, "user: "+u["content"].(map[string]any)["text"].(string))
		case "agent_message_chunk":
			transcript = append(transcript, u["content"].(map[string]any)["text"].(string))
		case "tool_call":
			transcript = append(transcript, "tool: "+u["title"].(string))
		}
	}
	got := strings.Join(transcript, "|")
	for _, want := range []string{"user: write the notes|Writing |notes.txt.|tool: write_file: notes.txt",
		"tool: run_shell: echo hello", "Done.|user: write them again", "user: and once more"} {
		if !strings.Contains(got, want) {
			t.Errorf("the loaded session's replay lacks %q:\n%s", want, got)
		}
	}
}

// toolCallID is the id of the decide phase's tool call whose approval was
// titled title.
func toolCallID(s summary, title string) string {
	for _, u := range s.Updates {
		if u["sessionUpdate"] == "tool_call_update" && u["title"] == title && u["phase"] == "decide" {
			return u["toolCallId"].(string)
		}
	}
	return ""
}

func checkWorkspace(t *testing.T, ws string) {
	if b, err := os.ReadFile(filepath.Join(ws, "notes.txt")); err != nil || string(b) != "approved\n" {
		t.Errorf("notes.txt = %q, %v; want the approved content", b, err)
	}
	if _, err := os.Stat(filepath.Join(ws, "rejected.txt")); !os.IsNotExist(err) {
		t.Errorf("rejected.txt exists (%v): a rejected write was made", err)
	}
	b, err := os.ReadFile(filepath.Join(ws, "story.txt"))
	lines := strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
	if err != nil || len(lines) != 20 || lines[0] != "LINE 1" || lines[19] != "line 20" {
		t.Errorf("story.txt = %q, %v; want hunk 1 applied (LINE 1) and hunk 2 not (line 20)", b, err)
	}
}

func checkAudit(t *testing.T, s summary, export string) {
	var decisions []string
	created := 0
	var cancelled bool
	sc := bufio.NewScanner(strings.NewReader(export))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		var e auditEntry
		if err := json.Unmarshal(sc.Bytes(), &e); err != nil {
			t.Fatalf("audit line %q: %v", sc.Text(), err)
		}
		switch {
		case e.Kind == "run.created" && e.Surface == "acp":
			created++
		case e.Kind == "approval.resolved" && e.RunID == s.First.Meta.Agenthub.RunID:
			if !strings.HasPrefix(e.SubjectHash, "sha256:") {
				t.Errorf("decision %+v: not bound to a subject hash", e)
			}
			var data decisionData
			if err := json.Unmarshal(e.Data, &data); err != nil {
				t.Fatalf("decision data %s: %v", e.Data, err)
			}
			d := e.Surface + " " + data.Decision
			for _, h := range data.Hunks {
				d += " " + h.Path + "#" + strconv.Itoa(h.Index+1)
			}
			if data.Reason != "" {
				d += " (" + data.Reason + ")"
			}
			decisions = append(decisions, d)
		case e.Kind == "run.transition" && e.RunID == s.Second.Meta.Agenthub.RunID:
			var data transitionData
			if err := json.Unmarshal(e.Data, &data); err != nil {
				t.Fatalf("transition data %s: %v", e.Data, err)
			}
			if data.To == "Cancelled" {
				cancelled = data.DoneReason == "user_cancelled"
			}
		}
	}
	// The command was approved from the CLI while the editor's dialog was
	// open: the editor's late rejection is not recorded, nor applied.
	want := []string{"acp approve_once", "acp reject_and_tell (rejected in the editor over ACP)", "acp approve_once story.txt#1",
		"cli approve_once"}
	if !slices.Equal(decisions, want) {
		t.Errorf("audited decisions %q, want %q", decisions, want)
	}
	if created != 3 {
		t.Errorf("%d runs created from surface acp in the audit trail, want 3", created)
	}
	if !cancelled {
		t.Errorf("the second run's cancellation by the user is not in the audit trail")
	}
}
