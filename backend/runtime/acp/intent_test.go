package acp

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	sdk "github.com/coder/acp-go-sdk"

	"agenthub/backend"
)

// recordingJournal records each intent with what the file held when the
// intent was announced (it must still be the before-image: intent before
// effect), and refuses every intent when fail is set.
type recordingJournal struct {
	t       *testing.T
	root    string
	fail    bool
	intents []backend.Intent
	onDisk  []string
}

func (j *recordingJournal) Intend(in backend.Intent) error {
	if j.fail {
		return errors.New("the database is full")
	}
	for _, f := range in.Files {
		b, _ := os.ReadFile(filepath.Join(j.root, f.Path))
		j.onDisk = append(j.onDisk, string(b))
	}
	j.intents = append(j.intents, in)
	return nil
}

func (j *recordingJournal) Abandon(string, string, error) {}

func sha(s string) string {
	sum := sha256.Sum256([]byte(s))
	return hex.EncodeToString(sum[:])
}

// TestWritesAreIntentsFirst (issue 15): an ACP agent's approved write is
// recorded as an intent of the approving call, with the file's before and
// after hashes, before its first byte is written; when the intent cannot
// be recorded nothing is written.
func TestWritesAreIntentsFirst(t *testing.T) {
	for _, fail := range []bool{false, true} {
		before, after := "one\n", "two\n"
		s := testSession(t, map[string]string{"a.txt": before})
		j := &recordingJournal{t: t, root: s.Root, fail: fail}
		p := s.newPermission(sdk.RequestPermissionRequest{ToolCall: sdk.ToolCallUpdate{ToolCallId: "c1",
			Kind: sdk.Ptr(sdk.ToolKindEdit), Content: []sdk.ToolCallContent{sdk.ToolDiffContent(s.Root+"/a.txt", after)}},
			Options: []sdk.PermissionOption{{Kind: sdk.PermissionOptionKindAllowOnce, OptionId: "once"}}})
		call, err := s.proxyCall(p)
		if err != nil {
			t.Fatal(err)
		}
		var a permArgs
		_ = json.Unmarshal(call.Arguments, &a)
		env := backend.ToolEnv{WorkspaceRoot: s.Root, WorkspaceID: "ws", Intents: j}
		plans, res := s.planEdit(env, p, a, json.RawMessage(`{"decision":"approve_once"}`))
		if res != nil || len(plans) != 1 {
			t.Fatalf("plan: %+v", res)
		}
		_, err = client{s}.WriteTextFile(t.Context(), sdk.WriteTextFileRequest{Path: s.Root + "/a.txt", Content: after})
		got, _ := os.ReadFile(filepath.Join(s.Root, "a.txt"))
		if fail {
			if err == nil || string(got) != before || len(j.intents) != 0 {
				t.Errorf("an unrecorded intent: write error %v, a.txt %q", err, got)
			}
			continue
		}
		if err != nil || string(got) != after {
			t.Fatalf("write: %v, a.txt %q", err, got)
		}
		if len(j.intents) != 1 {
			t.Fatalf("%d intents, want 1", len(j.intents))
		}
		in := j.intents[0]
		if in.ID != plans[0].applied.CheckpointID || len(in.Files) != 1 || in.Files[0].Path != "a.txt" ||
			in.Files[0].Before != sha(before) || in.Files[0].After != sha(after) {
			t.Errorf("intent %+v (checkpoint %s)", in, plans[0].applied.CheckpointID)
		}
		if strings.Join(j.onDisk, "") != before {
			t.Errorf("the file held %q when its intent was recorded, want the before-image", j.onDisk)
		}
	}
}
