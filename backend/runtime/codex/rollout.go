package codex

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
)

// This file completes the advisory record from the session's rollout:
// Codex 0.169.0's `exec --json` does not always print a command_execution
// item, but Codex writes every call of the thread to
// CODEX_HOME/sessions/YYYY/MM/DD/rollout-<time>-<thread id>.jsonl. When
// the turn ends, the rollout's commands and patches that the stream did not
// report are recorded as observed actions too, marked source "rollout".
//
// Rollout lines used ({"timestamp","ordinal","type","payload"}):
//   - type "event_msg", payload.type "item_completed", payload.item.type
//     "CommandExecution": item.id is the call id, item.command the argv,
//     with status, aggregated_output and exit_code;
//   - type "event_msg", payload.type "item_completed", payload.item.type
//     "FileChange": item.id is the call id, item.changes a map of absolute
//     path to {"type": "add"|"update"|"delete", …}, with status;
//   - type "response_item", payload.type "function_call" with name
//     "exec_command" (arguments {"cmd": the command line}) and its
//     "function_call_output" ("Process exited with code N … Output:\n…"):
//     a command whose CommandExecution item is missing, which 0.169.0
//     leaves out at times (seen with a command the sandbox refused);
//   - type "response_item", payload.type "custom_tool_call" with name
//     "apply_patch" (input: the patch, workspace-relative paths) and its
//     "custom_tool_call_output" (same call_id): a patch whose FileChange
//     item is missing (one that never applied) is still recorded.
//
// Everything else is skipped. The rollout is Codex's own file under
// AgentHub's CODEX_HOME; nothing of it is persisted except through
// [session.observedCall], which scrubs paths and secrets.

// rolloutSource marks an observed action read from the rollout.
const rolloutSource = "rollout"

// rolloutLine is one line of a rollout file.
type rolloutLine struct {
	Type    string `json:"type"`
	Payload struct {
		Type   string `json:"type"`
		Name   string `json:"name"`
		CallID string `json:"call_id"`
		Args   string `json:"arguments"`
		Input  string `json:"input"`
		Output any    `json:"output"`
		Item   *struct {
			Type    string   `json:"type"`
			ID      string   `json:"id"`
			Command []string `json:"command"`
			Status  string   `json:"status"`
			Output  *string  `json:"aggregated_output"`
			Exit    *int     `json:"exit_code"`
			Changes map[string]struct {
				Type string `json:"type"`
			} `json:"changes"`
		} `json:"item"`
	} `json:"payload"`
}

// rolloutCall is one command or patch of a rollout; Argv is set for a
// command, Files ("add hello.txt", with the patch's own paths) for a patch.
type rolloutCall struct {
	ID     string
	Argv   []string
	Status string
	Output *string
	Exit   *int
	Files  []fileChange
	// Line is set when Argv is exec_command's one command line rather than
	// an argv: it is shown as it is.
	Line bool
}

var patchFile = regexp.MustCompile(`(?m)^\*\*\* (Add|Update|Delete) File: (.+)$`)

// parseRollout reads a rollout's commands and patches in order, one per
// call id (for a patch, its FileChange item over its apply_patch call), and
// whether the turn's end (task_complete or turn_aborted) is written yet.
// Lines that are not JSON are skipped: the rollout is a supplement, the
// stream stays primary.
func parseRollout(r io.Reader) (calls []rolloutCall, ended bool) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64<<10), 16<<20)
	at := map[string]int{} // call id → index in calls
	for sc.Scan() {
		var l rolloutLine
		if json.Unmarshal(bytes.TrimSpace(sc.Bytes()), &l) != nil {
			continue
		}
		p := l.Payload
		switch {
		case l.Type == "event_msg" && (p.Type == "task_complete" || p.Type == "turn_aborted"):
			ended = true
		case l.Type == "event_msg" && p.Type == "item_completed" && p.Item != nil &&
			p.Item.Type == "CommandExecution" && p.Item.ID != "":
			c := rolloutCall{ID: p.Item.ID, Argv: p.Item.Command, Status: p.Item.Status,
				Output: p.Item.Output, Exit: p.Item.Exit}
			if i, dup := at[p.Item.ID]; dup {
				if calls[i].Line { // the item is better than its exec_command call
					calls[i] = c
				}
				continue
			}
			at[p.Item.ID] = len(calls)
			calls = append(calls, c)
		case l.Type == "response_item" && p.Type == "function_call" && p.Name == "exec_command" && p.CallID != "":
			var args struct {
				Cmd string `json:"cmd"`
			}
			if _, dup := at[p.CallID]; dup || json.Unmarshal([]byte(p.Args), &args) != nil || args.Cmd == "" {
				continue
			}
			at[p.CallID] = len(calls)
			calls = append(calls, rolloutCall{ID: p.CallID, Argv: []string{args.Cmd}, Line: true, Status: "in_progress"})
		case l.Type == "response_item" && p.Type == "function_call_output" && p.CallID != "":
			if i, ok := at[p.CallID]; ok && calls[i].Line && calls[i].Status == "in_progress" {
				calls[i].Status, calls[i].Exit, calls[i].Output = execCommandOutput(p.Output)
			}
		case l.Type == "event_msg" && p.Type == "item_completed" && p.Item != nil &&
			p.Item.Type == "FileChange" && p.Item.ID != "":
			c := rolloutCall{ID: p.Item.ID, Status: p.Item.Status}
			for _, path := range slices.Sorted(maps.Keys(p.Item.Changes)) {
				var fc fileChange
				fc.Path, fc.Kind.Type = path, p.Item.Changes[path].Type
				c.Files = append(c.Files, fc)
			}
			if i, ok := at[p.Item.ID]; ok { // its apply_patch call came first
				calls[i] = c
				continue
			}
			at[p.Item.ID] = len(calls)
			calls = append(calls, c)
		case l.Type == "response_item" && p.Type == "custom_tool_call" && p.Name == "apply_patch" && p.CallID != "":
			if _, dup := at[p.CallID]; dup {
				continue
			}
			c := rolloutCall{ID: p.CallID, Status: "in_progress"}
			for _, m := range patchFile.FindAllStringSubmatch(p.Input, -1) {
				var fc fileChange
				fc.Path, fc.Kind.Type = strings.TrimSpace(m[2]), strings.ToLower(m[1])
				c.Files = append(c.Files, fc)
			}
			at[p.CallID] = len(calls)
			calls = append(calls, c)
		case l.Type == "response_item" && p.Type == "custom_tool_call_output" && p.CallID != "":
			if i, ok := at[p.CallID]; ok && calls[i].Argv == nil && calls[i].Status == "in_progress" {
				calls[i].Status = patchStatus(p.Output)
			}
		}
	}
	return calls, ended
}

var exitLine = regexp.MustCompile(`(?m)^Process exited with code (-?\d+)$`)

// execCommandOutput reads exec_command's output: "Process exited with code N"
// and the text after "Output:\n".
func execCommandOutput(out any) (status string, exit *int, output *string) {
	text, _ := out.(string)
	status = "failed"
	if m := exitLine.FindStringSubmatch(text); m != nil {
		if n, err := strconv.Atoi(m[1]); err == nil {
			exit = &n
			if n == 0 {
				status = "completed"
			}
		}
	}
	if _, after, ok := strings.Cut(text, "\nOutput:\n"); ok {
		output = &after
	}
	return status, exit, output
}

// patchStatus reads apply_patch's output: Codex reports success as
// "Success. Updated the following files:" (possibly inside a JSON text).
func patchStatus(out any) string {
	b, _ := json.Marshal(out)
	if bytes.Contains(b, []byte("Success.")) {
		return "completed"
	}
	return "failed"
}

// threadIDPattern is what a thread id may look like; it goes into a glob.
var threadIDPattern = regexp.MustCompile(`^[0-9A-Za-z-]{8,64}$`)

// rolloutPath finds the rollout of thread under codexHome; "" if none.
func rolloutPath(codexHome, thread string) string {
	if codexHome == "" || !filepath.IsAbs(codexHome) || !threadIDPattern.MatchString(thread) {
		return ""
	}
	m, _ := filepath.Glob(filepath.Join(codexHome, "sessions", "*", "*", "*", "rollout-*-"+thread+".jsonl"))
	if len(m) == 0 {
		return ""
	}
	return m[len(m)-1]
}

// execSeen is what the exec stream reported of the turn, to tell which of
// the rollout's calls it missed.
type execSeen struct {
	commands []string // as printed ("/bin/bash -lc '…'")
	patches  int
}

// missed returns the rollout calls the stream did not report: a command is
// reported when a printed command not matched yet shows its script (the
// last argument), patches by count, in order.
func (e execSeen) missed(calls []rolloutCall) []rolloutCall {
	used := make([]bool, len(e.commands))
	patches := e.patches
	var out []rolloutCall
	for _, c := range calls {
		if c.Argv == nil {
			if patches > 0 {
				patches--
				continue
			}
			out = append(out, c)
			continue
		}
		if i := e.match(c.Argv, used); i >= 0 {
			used[i] = true
			continue
		}
		out = append(out, c)
	}
	return out
}

func (e execSeen) match(argv []string, used []bool) int {
	if len(argv) == 0 {
		return -1
	}
	script := argv[len(argv)-1]
	for i, printed := range e.commands {
		if !used[i] && (printed == strings.Join(argv, " ") || strings.Contains(printed, script)) {
			return i
		}
	}
	return -1
}

// rolloutWait bounds how long the end of a turn waits for Codex to write
// the turn's end to the rollout (it writes the file asynchronously).
const rolloutWait = 2 * time.Second

// readRollout queues the rollout's calls the stream missed as observed
// items; s.Mu is held. A missing or unreadable rollout adds nothing: the
// stream's record stands.
func (s *session) readRollout() {
	p := rolloutPath(s.cfg.codexHome(), s.execThread)
	if p == "" {
		return
	}
	var calls []rolloutCall
	for deadline := time.Now().Add(rolloutWait); ; time.Sleep(50 * time.Millisecond) {
		b, err := os.ReadFile(p)
		if err != nil {
			return
		}
		var ended bool
		calls, ended = parseRollout(bytes.NewReader(b))
		if ended || time.Now().After(deadline) {
			break
		}
	}
	for _, c := range s.execSeen.missed(calls) {
		s.Queue = append(s.Queue, event{kind: evObserved, item: c.item()})
	}
}

// item is the observed item of a rollout call.
func (c rolloutCall) item() threadItem {
	if c.Argv == nil {
		return threadItem{Type: "fileChange", ID: c.ID, Status: c.Status, Changes: c.Files, Source: rolloutSource}
	}
	command := shellJoin(c.Argv)
	if c.Line {
		command = c.Argv[0]
	}
	return threadItem{Type: "commandExecution", ID: c.ID, Command: command, Status: c.Status,
		Output: c.Output, Exit: c.Exit, Source: rolloutSource}
}

// shellJoin prints argv as exec does: arguments with anything but safe
// characters single-quoted.
func shellJoin(argv []string) string {
	q := make([]string, len(argv))
	for i, a := range argv {
		if a != "" && strings.Trim(a, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%") == "" {
			q[i] = a
			continue
		}
		q[i] = "'" + strings.ReplaceAll(a, "'", `'\''`) + "'"
	}
	return strings.Join(q, " ")
}
