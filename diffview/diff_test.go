package diffview

import (
	"bytes"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

func mustDiff(t *testing.T, old, new Side, opts Options) FileDiff {
	t.Helper()
	fd, err := Diff(old, new, opts)
	if err != nil {
		t.Fatal(err)
	}
	return fd
}

func TestStatus(t *testing.T) {
	txt := []byte("a\nb\n")
	tests := []struct {
		name      string
		old, new  Side
		want      Status
		wantHunks int
	}{
		{"added", Side{}, Side{Path: "f", Content: txt}, StatusAdded, 1},
		{"added empty", Side{}, Side{Path: "f"}, StatusAdded, 0},
		{"deleted", Side{Path: "f", Content: txt}, Side{}, StatusDeleted, 1},
		{"renamed", Side{Path: "f", Content: txt}, Side{Path: "g", Content: txt}, StatusRenamed, 0},
		{"renamed and edited", Side{Path: "f", Content: txt}, Side{Path: "g", Content: []byte("a\nc\n")}, StatusRenamed, 1},
		{"mode", Side{Path: "f", Content: txt}, Side{Path: "f", Mode: ModeExecutable, Content: txt}, StatusModeChanged, 0},
		{"modified", Side{Path: "f", Content: txt}, Side{Path: "f", Content: []byte("a\n")}, StatusModified, 1},
		{"unchanged", Side{Path: "f", Content: txt}, Side{Path: "f", Content: txt}, StatusUnchanged, 0},
		{"emptied", Side{Path: "f", Content: txt}, Side{Path: "f"}, StatusModified, 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fd := mustDiff(t, tt.old, tt.new, Options{})
			if fd.Status != tt.want || len(fd.Hunks) != tt.wantHunks {
				t.Fatalf("status %s with %d hunks, want %s with %d", fd.Status, len(fd.Hunks), tt.want, tt.wantHunks)
			}
			got, err := Apply(tt.old.Content, fd)
			if err != nil || !bytes.Equal(got, tt.new.Content) {
				t.Fatalf("apply: %q, %v; want %q", got, err, tt.new.Content)
			}
		})
	}
}

func TestInvalidInput(t *testing.T) {
	tests := []struct {
		name     string
		old, new Side
	}{
		{"both absent", Side{}, Side{}},
		{"absolute", Side{Path: "/etc/passwd"}, Side{Path: "x"}},
		{"climbs", Side{Path: "a"}, Side{Path: "../a"}},
		{"unclean", Side{Path: "a//b"}, Side{Path: "a"}},
		{"windows drive", Side{Path: "C:/x"}, Side{Path: "a"}},
		{"backslash", Side{Path: `a\b`}, Side{Path: "a"}},
		{"newline", Side{Path: "a\nb"}, Side{Path: "a"}},
		{"bad mode", Side{Path: "a", Mode: "777"}, Side{Path: "a"}},
		{"content without path", Side{Content: []byte("x")}, Side{Path: "a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if _, err := Diff(tt.old, tt.new, Options{}); !errors.Is(err, ErrInvalid) {
				t.Fatalf("err = %v, want ErrInvalid", err)
			}
		})
	}
}

func TestLinesNumberedAndTagged(t *testing.T) {
	old := "one\ntwo\r\nthree\nfour"
	new := "one\ntwo!\r\nthree\nfour\n"
	fd := mustDiff(t, Side{Path: "f", Content: []byte(old)}, Side{Path: "f", Content: []byte(new)}, Options{})
	want := []Hunk{{OldStart: 1, OldLines: 4, NewStart: 1, NewLines: 4, Lines: []Line{
		{Op: OpContext, Old: 1, New: 1, Text: "one", EOL: EOLLF},
		{Op: OpDelete, Old: 2, Text: "two", EOL: EOLCRLF},
		{Op: OpAdd, New: 2, Text: "two!", EOL: EOLCRLF, Spans: []Span{{3, 4}}},
		{Op: OpContext, Old: 3, New: 3, Text: "three", EOL: EOLLF},
		{Op: OpDelete, Old: 4, Text: "four", EOL: EOLNone},
		{Op: OpAdd, New: 4, Text: "four", EOL: EOLLF},
	}}}
	if diff := cmp.Diff(want, fd.Hunks); diff != "" {
		t.Fatalf("hunks (-want +got):\n%s", diff)
	}
	if fd.Stats != (Stats{Added: 2, Deleted: 2}) || fd.Old.Lines != 4 || fd.New.Lines != 4 {
		t.Fatalf("stats %+v, lines %d/%d", fd.Stats, fd.Old.Lines, fd.New.Lines)
	}
}

func TestWordSpans(t *testing.T) {
	tests := []struct {
		name       string
		old, new   string
		wantOld    []Span
		wantNew    []Span
		wantNoSpan bool
	}{
		{"one word", "call(a, b)", "call(a, c)", []Span{{8, 9}}, []Span{{8, 9}}, false},
		{"utf16 offsets after emoji", "🎉 x = 1", "🎉 x = 2", []Span{{7, 8}}, []Span{{7, 8}}, false},
		{"appended text", "l", "l the end", nil, []Span{{1, 9}}, false},
		{"unrelated lines", "return nil", "for i := range xs {", nil, nil, true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fd := mustDiff(t, Side{Path: "f", Content: []byte(tt.old + "\n")}, Side{Path: "f", Content: []byte(tt.new + "\n")}, Options{})
			del, add := fd.Hunks[0].Lines[0], fd.Hunks[0].Lines[1]
			if tt.wantNoSpan {
				if del.Spans != nil || add.Spans != nil {
					t.Fatalf("spans %v %v, want none", del.Spans, add.Spans)
				}
				return
			}
			if diff := cmp.Diff(tt.wantOld, del.Spans); diff != "" {
				t.Errorf("old spans:\n%s", diff)
			}
			if diff := cmp.Diff(tt.wantNew, add.Spans); diff != "" {
				t.Errorf("new spans:\n%s", diff)
			}
		})
	}
	fd := mustDiff(t, Side{Path: "f", Content: []byte("a b\n")}, Side{Path: "f", Content: []byte("a c\n")}, Options{NoWords: true})
	if fd.Hunks[0].Lines[1].Spans != nil {
		t.Fatal("NoWords still produced spans")
	}
}

func TestInvalidUTF8KeptExactly(t *testing.T) {
	old := []byte("ok\n\xff\xfebad\nend\n")
	new := []byte("ok\n\xff\xfebad!\nend\n")
	fd := mustDiff(t, Side{Path: "f", Content: old}, Side{Path: "f", Content: new}, Options{})
	del := fd.Hunks[0].Lines[1]
	if del.Text != "\uFFFDbad" && del.Text != "\uFFFD\uFFFDbad" {
		t.Fatalf("display text %q", del.Text)
	}
	if !bytes.Equal(del.Raw, []byte("\xff\xfebad")) {
		t.Fatalf("raw %q", del.Raw)
	}
	raw, err := json.Marshal(fd)
	if err != nil {
		t.Fatal(err)
	}
	if !json.Valid(raw) || !strings.Contains(string(raw), `"raw":"//5iYWQ="`) {
		t.Fatalf("JSON does not carry the bytes as base64: %s", raw)
	}
	var back FileDiff
	if err := json.Unmarshal(raw, &back); err != nil {
		t.Fatal(err)
	}
	got, err := Apply(old, back)
	if err != nil || !bytes.Equal(got, new) {
		t.Fatalf("apply after JSON: %q, %v", got, err)
	}
}

func TestBinary(t *testing.T) {
	old := []byte("PNG\x00\x01\x02")
	new := []byte("PNG\x00\x01\x03\x04")
	fd := mustDiff(t, Side{Path: "img.png", Content: old}, Side{Path: "img.png", Content: new}, Options{})
	if fd.Binary == nil || fd.IsText() || len(fd.Hunks) != 0 {
		t.Fatalf("not shown as binary: %+v", fd)
	}
	if fd.Old.Size != 6 || fd.New.Size != 7 || fd.Old.SHA256 == "" || fd.Old.SHA256 == fd.New.SHA256 {
		t.Fatalf("sizes or hashes missing: %+v %+v", fd.Old, fd.New)
	}
	if got := string(Unified(fd)); !strings.HasSuffix(got, "Binary files a/img.png and b/img.png differ\n") {
		t.Fatalf("unified: %q", got)
	}
	if _, err := Apply(old, fd); !errors.Is(err, ErrNotText) {
		t.Fatalf("apply err = %v, want ErrNotText", err)
	}
	if _, err := Select(fd, nil); !errors.Is(err, ErrNotText) {
		t.Fatalf("select err = %v, want ErrNotText", err)
	}
}

func TestOmitted(t *testing.T) {
	many := []byte(strings.Repeat("x\n", 50))
	other := []byte(strings.Repeat("y\n", 50))
	tests := []struct {
		name string
		opts Options
		want OmitReason
	}{
		{"bytes", Options{MaxBytes: 99}, OmitTooManyBytes},
		{"lines", Options{MaxLines: 49}, OmitTooManyLines},
		{"rows", Options{MaxRows: 99}, OmitDiffTooLarge},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			fd := mustDiff(t, Side{Path: "f", Content: many}, Side{Path: "f", Content: other}, tt.opts)
			if fd.Omitted == nil || fd.Omitted.Reason != tt.want || fd.Omitted.Detail == "" || len(fd.Hunks) != 0 {
				t.Fatalf("omitted = %+v, hunks %d; want reason %s", fd.Omitted, len(fd.Hunks), tt.want)
			}
			if !strings.Contains(string(Unified(fd)), "# diff omitted: "+string(tt.want)) {
				t.Fatalf("unified text hides the omission:\n%s", Unified(fd))
			}
		})
	}
	fd := mustDiff(t, Side{Path: "f", Content: many}, Side{Path: "f", Content: other}, Options{MaxRows: 100})
	if fd.Omitted != nil {
		t.Fatalf("exactly at the row limit must not omit: %+v", fd.Omitted)
	}
}

func TestApplyConflict(t *testing.T) {
	old := []byte("a\nb\nc\nd\n")
	fd := mustDiff(t, Side{Path: "f", Content: old}, Side{Path: "f", Content: []byte("a\nB\nc\nd\n")}, Options{})
	changed := []byte("a\nb\nC\nd\n")
	if _, err := Apply(changed, fd); !errors.Is(err, ErrConflict) {
		t.Fatalf("hash check: err = %v", err)
	}
	noHash := fd
	noHash.Old.SHA256, noHash.New.SHA256 = "", ""
	if _, err := Apply(changed, noHash); !errors.Is(err, ErrConflict) || !strings.Contains(err.Error(), "line 3") {
		t.Fatalf("context check: err = %v", err)
	}
	if _, err := Apply([]byte("a\n"), noHash); !errors.Is(err, ErrConflict) {
		t.Fatalf("short file: err = %v", err)
	}
	added := mustDiff(t, Side{}, Side{Path: "f", Content: old}, Options{})
	if _, err := Apply([]byte("exists"), added); !errors.Is(err, ErrConflict) {
		t.Fatalf("new file over content: err = %v", err)
	}
}

func TestSelectEdges(t *testing.T) {
	old := []byte(strings.Repeat("line\n", 3) + "a\n" + strings.Repeat("line\n", 10) + "b\n")
	new := []byte(strings.Repeat("line\n", 3) + "A\n" + strings.Repeat("line\n", 10) + "B\nextra\n")
	fd := mustDiff(t, Side{Path: "f", Content: old}, Side{Path: "f", Content: new}, Options{})
	if len(fd.Hunks) != 2 {
		t.Fatalf("want 2 hunks, got %d", len(fd.Hunks))
	}
	for _, bad := range [][]int{{2}, {-1}, {0, 0}} {
		if _, err := Select(fd, bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("Select(%v) err = %v, want ErrInvalid", bad, err)
		}
	}
	none, err := Select(fd, nil)
	if err != nil || none.Status != StatusUnchanged || len(Unified(none)) != 0 {
		t.Fatalf("empty selection: %+v, %v", none, err)
	}
	second, err := Select(fd, []int{1})
	if err != nil {
		t.Fatal(err)
	}
	if h := second.Hunks[0]; h.NewStart != h.OldStart || second.Stats != (Stats{Added: 2, Deleted: 1}) {
		t.Fatalf("renumbered hunk %+v, stats %+v", h, second.Stats)
	}
	if second.New.SHA256 != "" || second.Old.SHA256 != fd.Old.SHA256 {
		t.Fatal("select must keep the pre-image hash and clear the unknown post-image hash")
	}
}

// TestPathological: no line is unique, so no anchor exists and go-diff gets
// the whole region; with a tiny budget it must stop, say so, and still
// produce a correct patch.
func TestPathological(t *testing.T) {
	var a, b strings.Builder
	for i := 0; i < 20000; i++ {
		a.WriteString([]string{"x\n", "y\n", "z\n"}[(i*7)%3])
		b.WriteString([]string{"x\n", "y\n", "z\n"}[(i*i)%3])
	}
	old, new := []byte(a.String()), []byte(b.String())
	fd := mustDiff(t, Side{Path: "f", Content: old}, Side{Path: "f", Content: new}, Options{Timeout: time.Millisecond})
	if fd.Degraded == nil || fd.Degraded.Regions == 0 || fd.Degraded.Reason == "" {
		t.Fatalf("degradation not reported: %+v", fd.Degraded)
	}
	got, err := Apply(old, fd)
	if err != nil || !bytes.Equal(got, new) {
		t.Fatalf("degraded patch does not apply: %v", err)
	}
}
