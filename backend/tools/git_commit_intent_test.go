package tools

import (
	"encoding/json"
	"errors"
	"testing"

	"agenthub/backend"
)

// commitJournal records git_commit's intent with HEAD at that moment (it
// must still be the base: intent before effect) and how it was closed.
type commitJournal struct {
	t         *testing.T
	root      string
	fail      bool
	intents   []backend.Intent
	headAt    []string
	applied   map[string]string
	abandoned map[string]string
}

func (j *commitJournal) Intend(in backend.Intent) error {
	if j.fail {
		return errors.New("the database is full")
	}
	j.intents = append(j.intents, in)
	j.headAt = append(j.headAt, head(j.t, j.root))
	return nil
}

func (j *commitJournal) Abandon(id, verdict string, _ error) { j.abandoned[id] = verdict }

func (j *commitJournal) Applied(id, outcome string) error {
	j.applied[id] = outcome
	return nil
}

// TestGitCommitIsAnIntentFirst (issue 15): the commit is recorded as an
// intent (base HEAD, every path's blob) before it is made, and closed as
// applied with the commit's hash; a commit that fails after its intent is
// abandoned with what the repository shows (not applied); an intent that
// cannot be recorded commits nothing.
func TestGitCommitIsAnIntentFirst(t *testing.T) {
	f := newFixture(t)
	f.write(t, "a.txt", "one\n")
	base := commitAll(t, f.root, "a.txt")
	f.write(t, "a.txt", "two\n")
	run := func(j *commitJournal, args string) backend.ToolResult {
		env := f.env()
		env.Intents = j
		res, err := f.tools[GitCommit].Execute(t.Context(), env, backend.ToolInput{CallID: "c1", Arguments: json.RawMessage(args)})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	newJournal := func(fail bool) *commitJournal {
		return &commitJournal{t: t, root: f.root, fail: fail, applied: map[string]string{}, abandoned: map[string]string{}}
	}

	refused := newJournal(true)
	if res := run(refused, `{"message":"m"}`); !res.IsError || head(t, f.root) != base {
		t.Fatalf("an unrecorded intent committed: %+v", res)
	}

	j := newJournal(false)
	res := run(j, `{"message":"agent commit"}`)
	if res.IsError || len(j.intents) != 1 {
		t.Fatalf("%+v, intents %+v", res, j.intents)
	}
	in := j.intents[0]
	if in.Op != backend.IntentCommit || len(in.Files) != 2 || in.Files[0].Path != "HEAD" || in.Files[0].Before != base ||
		in.Files[1].Path != "a.txt" || in.Files[1].After == "" || j.headAt[0] != base {
		t.Errorf("intent %+v recorded at HEAD %s (base %s)", in, j.headAt[0], base)
	}
	if got := j.applied[in.ID]; got != "committed "+head(t, f.root) {
		t.Errorf("closed as %q, HEAD %s", got, head(t, f.root))
	}
}
