package tools

import (
	"encoding/json"
	"strings"
	"testing"

	"agenthub/backend"
	"agenthub/diffview"
)

// twoHunks is a 30-line file and an edit of line 2 and line 28: far enough
// apart to be two hunks with the default context.
func twoHunks() (old, edited string) {
	var a, b []string
	for i := 1; i <= 30; i++ {
		line := "line " + strings.Repeat("x", i%7) + string(rune('a'+i%26))
		a = append(a, line)
		switch i {
		case 2:
			b = append(b, "FIRST CHANGE")
		case 28:
			b = append(b, "SECOND CHANGE")
		default:
			b = append(b, line)
		}
	}
	return strings.Join(a, "\n") + "\n", strings.Join(b, "\n") + "\n"
}

func TestPerHunkSelection(t *testing.T) {
	old, edited := twoHunks()
	tests := []struct {
		name       string
		resume     string
		want       string // "first", "second", "both", "none"
		isError    bool
		rejectedEv bool
	}{
		{"no selection applies the whole patch", `{"decision":"approve_once"}`, "both", false, false},
		{"first hunk only", `{"hunks":[{"path":"f.txt","index":0}],"reason":"only the first"}`, "first", false, true},
		{"second hunk only", `{"hunks":[{"path":"f.txt","index":1}]}`, "second", false, true},
		// Line 2 of hunk 0 is the addition: the old line 2 stays beside it.
		{"the addition of the first hunk only", `{"hunks":[{"path":"f.txt","index":0,"lines":[2]}]}`, "first", false, true},
		{"a context line writes nothing", `{"hunks":[{"path":"f.txt","index":0,"lines":[0]}]}`, "none", true, false},
		{"both hunks", `{"hunks":[{"path":"f.txt","index":1},{"path":"f.txt","index":0}]}`, "both", false, false},
		{"no hunk writes nothing", `{"hunks":[]}`, "none", true, true},
		{"another file's hunks do not count", `{"hunks":[{"path":"g.txt","index":0}]}`, "none", true, true},
		{"bad index writes nothing", `{"hunks":[{"path":"f.txt","index":7}]}`, "none", true, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			f.write(t, "f.txt", old)
			args, _ := json.Marshal(map[string]string{"path": "f.txt", "content": edited})
			a := f.action(t, WriteFile, string(args))
			var pv struct{ Diff diffview.FileDiff }
			if err := json.Unmarshal(a.Preview, &pv); err != nil || len(pv.Diff.Hunks) != 2 {
				t.Fatalf("the preview should show two hunks: %v %d", err, len(pv.Diff.Hunks))
			}
			res, err := f.tools[WriteFile].Execute(t.Context(), f.env(), backend.ToolInput{CallID: "c1",
				Arguments: args, ResumeInput: json.RawMessage(tc.resume)})
			if err != nil {
				t.Fatal(err)
			}
			got := f.read(t, "f.txt")
			first, second := strings.Contains(got, "FIRST CHANGE"), strings.Contains(got, "SECOND CHANGE")
			state := map[[2]bool]string{{true, true}: "both", {true, false}: "first", {false, true}: "second", {false, false}: "none"}[[2]bool{first, second}]
			if state != tc.want || res.IsError != tc.isError {
				t.Fatalf("file holds %s (error %v), want %s (error %v)\nresult: %s", state, res.IsError, tc.want, tc.isError, res.Content)
			}
			if tc.want == "none" && got != old {
				t.Fatal("a refused selection changed the file")
			}
			if got := len(f.eventsOf(backend.EvPatchRejected)) > 0; got != tc.rejectedEv {
				t.Fatalf("run.patch.rejected emitted %v, want %v", got, tc.rejectedEv)
			}
			if tc.rejectedEv && !strings.Contains(res.Content, "rejected @@") {
				t.Fatalf("the agent is not told which hunk was rejected: %s", res.Content)
			}
			if strings.Contains(tc.resume, `"lines":[2]`) && (!strings.Contains(got, strings.Split(old, "\n")[1]+"\nFIRST CHANGE\n") ||
				!strings.Contains(res.Content, "was kept (its removal was not approved)")) {
				t.Fatalf("the chosen addition beside the kept line 2, and the agent told so: %q\n%s", got, res.Content)
			}
		})
	}
}
