package workspace

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// recJournal records intents and checks, at the moment each is recorded,
// that nothing of the effect has reached the disk yet.
type recJournal struct {
	t         *testing.T
	root      string
	intents   []Intent
	abandoned map[string]Verdict
	fail      error
}

func (j *recJournal) Intend(in Intent) error {
	for _, f := range in.Files {
		got := Absent
		if data, err := os.ReadFile(filepath.Join(j.root, f.Path)); err == nil {
			got = Hash(data)
		}
		if got != f.Before {
			j.t.Errorf("intent %s recorded after %s changed", in.ID, f.Path)
		}
	}
	for _, s := range in.Staging {
		if _, err := os.Lstat(filepath.Join(j.root, s)); err == nil {
			j.t.Errorf("staging file %s exists before its intent", s)
		}
	}
	j.intents = append(j.intents, in)
	return j.fail
}

func (j *recJournal) Abandon(id string, v Verdict, _ error) {
	if j.abandoned == nil {
		j.abandoned = map[string]Verdict{}
	}
	j.abandoned[id] = v
}

// TestApplyIntentBeforeEffect: the intent names every file with its hashes
// and every staging file, and is recorded before the first byte; a journal
// that cannot record stops the apply with nothing written; a failed rename
// is abandoned with what the disk holds.
func TestApplyIntentBeforeEffect(t *testing.T) {
	for _, git := range []bool{false, true} {
		t.Run(map[bool]string{false: "plain", true: "git"}[git], func(t *testing.T) {
			f, store := applyFixture(t)
			if git {
				mustMkdir(t, filepath.Join(f.root, ".git"))
			}
			j := &recJournal{t: t, root: f.root}
			aHash := hashOf(t, filepath.Join(f.root, "a.txt"))
			var staged []string
			setHook(t, func(phase string, _ int, _ string) error {
				if phase == "staged" {
					staged = stagingFiles(t, f.root)
				}
				return nil
			})
			res, err := ApplyWith(f.fs, []Change{
				{Path: "a.txt", PreimageSHA256: aHash, NewContent: []byte("A2")},
				{Path: "n/new.txt", PreimageSHA256: Absent, NewContent: []byte("N")},
			}, store, Options{Journal: j})
			if err != nil {
				t.Fatal(err)
			}
			if len(j.intents) != 1 || j.intents[0].ID != res.CheckpointID || j.intents[0].Op != "write" {
				t.Fatalf("intents = %+v", j.intents)
			}
			in := j.intents[0]
			want := []IntentFile{{"a.txt", aHash, Hash([]byte("A2"))}, {"n/new.txt", Absent, Hash([]byte("N"))}}
			if len(in.Files) != 2 || in.Files[0] != want[0] || in.Files[1] != want[1] {
				t.Errorf("intent files = %+v, want %+v", in.Files, want)
			}
			// a.txt may need a restore file, new.txt not; both are staged.
			if len(in.Staging) != 3 {
				t.Errorf("staging names = %v, want 3", in.Staging)
			}
			if len(staged) != 2 {
				t.Errorf("staged files while applying = %v, want 2", staged)
			}
			for _, s := range append(staged, in.Staging...) {
				if git != strings.HasPrefix(s, stagingDir+"/") {
					t.Errorf("staging file %s: in .git = %v, want %v", s, !git, git)
				}
			}
			if left := stagingFiles(t, f.root); len(left) != 0 {
				t.Errorf("staging files left: %v", left)
			}
			v, _, err := Reconcile(f.fs, in)
			if err != nil || v != VerdictApplied {
				t.Errorf("reconcile after the apply = %s, %v", v, err)
			}
		})
	}
	t.Run("journal fails", func(t *testing.T) {
		f, store := applyFixture(t)
		before := snapshot(t, f.root)
		j := &recJournal{t: t, root: f.root, fail: errors.New("disk full")}
		_, err := ApplyWith(f.fs, []Change{{Path: "a.txt", PreimageSHA256: hashOf(t, filepath.Join(f.root, "a.txt")),
			NewContent: []byte("x")}}, store, Options{Journal: j})
		if err == nil || !strings.Contains(err.Error(), "nothing was written") {
			t.Errorf("apply with a failing journal = %v", err)
		}
		if after := snapshot(t, f.root); len(after) != len(before) || after["a.txt"] != before["a.txt"] {
			t.Errorf("the workspace changed: %v", after)
		}
	})
	t.Run("rename fails", func(t *testing.T) {
		f, store := applyFixture(t)
		j := &recJournal{t: t, root: f.root}
		setHook(t, func(phase string, i int, _ string) error {
			if phase == "replace" && i == 0 {
				return errors.New("injected")
			}
			return nil
		})
		_, err := ApplyWith(f.fs, []Change{{Path: "a.txt", PreimageSHA256: hashOf(t, filepath.Join(f.root, "a.txt")),
			NewContent: []byte("x")}}, store, Options{Journal: j})
		if err == nil || len(j.intents) != 1 || j.abandoned[j.intents[0].ID] != VerdictNotApplied {
			t.Errorf("err %v, abandoned %v", err, j.abandoned)
		}
	})
}

func stagingFiles(t *testing.T, root string) []string {
	t.Helper()
	var out []string
	_ = filepath.WalkDir(root, func(p string, d os.DirEntry, err error) error {
		if err == nil && strings.HasPrefix(d.Name(), ".agenthub-") {
			rel, _ := filepath.Rel(root, p)
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	return out
}

// TestReconcile: the verdict follows the disk, per the recovery rules, and
// staging files go whatever the verdict; a staging name that is not one of
// ours, or not a regular file, is left alone.
func TestReconcile(t *testing.T) {
	h := func(s string) string { return Hash([]byte(s)) }
	files := []IntentFile{{"a.txt", h("A1"), h("A2")}, {"new.txt", Absent, h("N")}}
	cases := []struct {
		name string
		disk map[string]string // "" = absent
		want Verdict
	}{
		{"all after", map[string]string{"a.txt": "A2", "new.txt": "N"}, VerdictApplied},
		{"all before", map[string]string{"a.txt": "A1", "new.txt": ""}, VerdictNotApplied},
		{"mixed", map[string]string{"a.txt": "A2", "new.txt": ""}, VerdictConflict},
		{"third content", map[string]string{"a.txt": "edited by the user", "new.txt": ""}, VerdictConflict},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			f := newFixture(t)
			mustMkdir(t, filepath.Join(f.root, ".git/agenthub-staging"))
			for p, content := range c.disk {
				if content != "" {
					mustWrite(t, filepath.Join(f.root, p), content)
				}
			}
			staging := []string{".git/agenthub-staging/.agenthub-0123456789abcdef.tmp", ".agenthub-0123456789abcdef.restore.tmp"}
			for _, s := range staging {
				mustWrite(t, filepath.Join(f.root, s), "staged")
			}
			mustWrite(t, filepath.Join(f.root, "notours.tmp"), "keep")
			v, states, err := Reconcile(f.fs, Intent{ID: "ck_x", Files: files,
				Staging: append(staging, "notours.tmp")})
			if v != c.want || len(states) != 2 {
				t.Errorf("verdict %s (%+v), want %s", v, states, c.want)
			}
			if err == nil {
				t.Error("a foreign staging name was accepted")
			}
			if left := stagingFiles(t, f.root); len(left) != 0 {
				t.Errorf("staging files left: %v", left)
			}
			if _, err := os.Stat(filepath.Join(f.root, "notours.tmp")); err != nil {
				t.Errorf("a file that is not a staging file was removed: %v", err)
			}
		})
	}
}
