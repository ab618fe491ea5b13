package tools

import (
	"fmt"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"agenthub/backend"
)

func TestReadFileRanges(t *testing.T) {
	f := newFixture(t)
	f.write(t, "src/a.txt", "one\ntwo\nthree\nfour\n")
	f.write(t, "nonl.txt", "alpha\nbeta")
	f.write(t, "empty.txt", "")
	tests := []struct {
		name, args string
		want       string
		isErr      bool
		event      *fileRead
	}{
		{name: "whole file", args: `{"path":"src/a.txt"}`,
			want:  "src/a.txt: lines 1-4 of 4 (19 bytes)\none\ntwo\nthree\nfour\n",
			event: &fileRead{Tool: ReadFile, Path: "src/a.txt", Bytes: 19, StartLine: 1, EndLine: 4}},
		{name: "range", args: `{"path":"./src//a.txt","start_line":2,"end_line":3}`,
			want:  "src/a.txt: lines 2-3 of 4 (19 bytes)\ntwo\nthree\n",
			event: &fileRead{Tool: ReadFile, Path: "src/a.txt", Bytes: 19, StartLine: 2, EndLine: 3}},
		{name: "from a line", args: `{"path":"src/a.txt","start_line":4}`,
			want: "src/a.txt: lines 4-4 of 4 (19 bytes)\nfour\n"},
		{name: "end past the end is clamped", args: `{"path":"src/a.txt","end_line":99}`,
			want: "src/a.txt: lines 1-4 of 4 (19 bytes)\none\ntwo\nthree\nfour\n"},
		{name: "single line", args: `{"path":"src/a.txt","start_line":1,"end_line":1}`,
			want: "src/a.txt: lines 1-1 of 4 (19 bytes)\none\n"},
		{name: "no final newline", args: `{"path":"nonl.txt"}`,
			want: "nonl.txt: lines 1-2 of 2 (10 bytes)\nalpha\nbeta\n\\ No newline at end of file\n"},
		{name: "empty", args: `{"path":"empty.txt"}`, want: "empty.txt: empty file (0 bytes)\n"},
		{name: "start past the end", args: `{"path":"src/a.txt","start_line":5}`, isErr: true,
			want: "read_file: start_line 5 is past the end of src/a.txt, which has 4 lines"},
		{name: "start after end", args: `{"path":"src/a.txt","start_line":3,"end_line":2}`, isErr: true,
			want: "read_file: start_line 3 is after end_line 2"},
		{name: "directory", args: `{"path":"src"}`, isErr: true,
			want: "read_file: src is a directory; use list_dir"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			before := len(f.eventsOf(backend.EvFileRead))
			if a := f.action(t, ReadFile, tc.args); a != nil {
				t.Errorf("a plain read was gated: %+v", a)
			}
			res := f.execute(t, ReadFile, tc.args)
			if res.IsError != tc.isErr || res.Content != tc.want {
				t.Fatalf("got %q (error %v), want %q (error %v)", res.Content, res.IsError, tc.want, tc.isErr)
			}
			evs := f.eventsOf(backend.EvFileRead)
			if tc.isErr && len(evs) != before {
				t.Errorf("a failed read emitted %v", evs[before:])
			}
			if !tc.isErr && len(evs) != before+1 {
				t.Fatalf("read emitted %d run.file.read events, want 1", len(evs)-before)
			}
			if tc.event != nil {
				if diff := cmp.Diff(*tc.event, evs[len(evs)-1]); diff != "" {
					t.Errorf("event (-want +got):\n%s", diff)
				}
			}
		})
	}
}

func TestReadFileMissing(t *testing.T) {
	f := newFixture(t)
	res := f.execute(t, ReadFile, `{"path":"nope.txt"}`)
	if !res.IsError || !strings.Contains(res.Content, "nope.txt") || !strings.Contains(res.Content, "list_dir") {
		t.Errorf("got %+v", res)
	}
	f.noMachinePaths(t, "result", res.Content)
}

func TestReadFileTruncatesOnALineBoundary(t *testing.T) {
	f := newFixture(t)
	var b strings.Builder
	const lines = 30000 // 12 bytes each: about 352 KiB
	for i := 1; i <= lines; i++ {
		fmt.Fprintf(&b, "line %06d\n", i)
	}
	f.write(t, "big.log", b.String())
	res := f.execute(t, ReadFile, `{"path":"big.log"}`)
	if res.IsError {
		t.Fatal(res.Content)
	}
	header, body, _ := strings.Cut(res.Content, "\n")
	shown := maxReadOutput / 12
	wantHeader := fmt.Sprintf("big.log: lines 1-%d of %d (%d bytes); output truncated at 256 KiB, continue with start_line=%d",
		shown, lines, b.Len(), shown+1)
	if header != wantHeader {
		t.Errorf("header %q, want %q", header, wantHeader)
	}
	if len(body) > maxReadOutput || !strings.HasSuffix(body, fmt.Sprintf("line %06d\n", shown)) {
		t.Errorf("body is %d bytes ending %q", len(body), body[len(body)-20:])
	}
	ev := f.eventsOf(backend.EvFileRead)[0].(fileRead)
	if !ev.Truncated || ev.EndLine != shown {
		t.Errorf("event %+v, want truncated at line %d", ev, shown)
	}
	next := f.execute(t, ReadFile, fmt.Sprintf(`{"path":"big.log","start_line":%d}`, shown+1))
	if _, body, _ := strings.Cut(next.Content, "\n"); !strings.HasPrefix(body, fmt.Sprintf("line %06d\n", shown+1)) {
		t.Errorf("continuing read starts %q", body[:20])
	}
}

func TestReadFileCutsAnOverlongLine(t *testing.T) {
	f := newFixture(t)
	f.write(t, "min.js", strings.Repeat("x", maxReadOutput+100)+"\nnext\n")
	res := f.execute(t, ReadFile, `{"path":"min.js"}`)
	header, body, _ := strings.Cut(res.Content, "\n")
	if res.IsError || !strings.Contains(header, "lines 1-1 of 2") || !strings.Contains(header, "longer than 262144 bytes and was cut") {
		t.Errorf("header %q", header)
	}
	if len(body) != maxReadOutput+1 {
		t.Errorf("body is %d bytes, want %d", len(body), maxReadOutput+1)
	}
}

func TestReadFileReportsBinary(t *testing.T) {
	f := newFixture(t)
	f.write(t, "img.png", "\x89PNG\r\n\x00\x00secret-pixels")
	res := f.execute(t, ReadFile, `{"path":"img.png"}`)
	if res.IsError || res.Content != "img.png: binary file (21 bytes), not shown\n" {
		t.Errorf("got %+v", res)
	}
	if ev := f.eventsOf(backend.EvFileRead)[0].(fileRead); !ev.Binary {
		t.Errorf("event %+v, want binary", ev)
	}
}

func TestReadFileScrubsMachinePaths(t *testing.T) {
	f := newFixture(t)
	f.write(t, "cfg.txt", "out="+f.root+"/build\nhome="+homeDir()+"/cache\n")
	res := f.execute(t, ReadFile, `{"path":"cfg.txt"}`)
	if !strings.Contains(res.Content, "out=./build\n") || !strings.Contains(res.Content, "home=~/cache\n") {
		t.Errorf("got %q", res.Content)
	}
	f.noMachinePaths(t, "result", res.Content)
}
