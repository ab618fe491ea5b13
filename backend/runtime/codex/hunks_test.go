package codex

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// The diffs are in the shape 0.169.0 puts in fileChange items (hunks
// without file headers); the samples marked "captured" are verbatim.
func TestApplyHunks(t *testing.T) {
	tests := []struct {
		name, cur, diff, want, err string
	}{
		{name: "captured update", cur: "# hi\nline2\nline3\n", diff: "@@ -1,2 +1,2 @@\n-# hi\n+# hello\n line2\n",
			want: "# hello\nline2\nline3\n"},
		{name: "captured move hunks", cur: "a\nkeep\n", diff: "@@ -1,2 +1,2 @@\n-a\n+b\n keep\n", want: "b\nkeep\n"},
		{name: "two hunks", cur: twoParts, diff: "@@ -1,2 +1,2 @@\n-alpha\n+ALPHA\n 1\n@@ -11,2 +11,2 @@\n 10\n-omega\n+OMEGA\n",
			want: strings.Replace(strings.Replace(twoParts, "alpha", "ALPHA", 1), "omega", "OMEGA", 1)},
		{name: "insert at top", cur: "b\n", diff: "@@ -0,0 +1 @@\n+a\n", want: "a\nb\n"},
		{name: "append", cur: "a\n", diff: "@@ -1 +1,2 @@\n a\n+b\n", want: "a\nb\n"},
		{name: "delete everything", cur: "a\n", diff: "@@ -1 +0,0 @@\n-a\n", want: ""},
		{name: "add a final newline", cur: "a", diff: "@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+a\n", want: "a\n"},
		{name: "drop the final newline", cur: "a\n", diff: "@@ -1 +1 @@\n-a\n+a\n\\ No newline at end of file\n", want: "a"},
		{name: "keep no final newline", cur: "x\na", diff: "@@ -1,2 +1,2 @@\n-x\n+y\n a\n\\ No newline at end of file\n", want: "y\na"},
		{name: "shifted by an earlier edit", cur: "new\n" + twoParts, diff: "@@ -1,2 +1,2 @@\n-alpha\n+ALPHA\n 1\n",
			want: "new\nALPHA\n1\n2\n3\n4\n5\n6\n7\n8\n9\n10\nomega\n"},
		{name: "changed file", cur: "other\n", diff: "@@ -1 +1 @@\n-a\n+b\n", err: "does not match"},
		{name: "ambiguous when moved", cur: "z\nx\nx\n", diff: "@@ -1 +1 @@\n-x\n+y\n", err: "does not match"},
		{name: "no hunks", cur: "a\n", diff: "", err: "no hunks"},
		{name: "garbage", cur: "a\n", diff: "hello\n", err: "outside a hunk"},
		{name: "wrong count", cur: "a\nb\n", diff: "@@ -1,2 +1 @@\n-a\n", err: "header says 2"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := applyHunks([]byte(tt.cur), tt.diff)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("err = %v, want %q", err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if diff := cmp.Diff(tt.want, string(got)); diff != "" {
				t.Fatalf("(-want +got):\n%s", diff)
			}
		})
	}
}

const twoParts = "alpha\n1\n2\n3\n4\n5\n6\n7\n8\n9\n10\nomega\n"

func FuzzApplyHunks(f *testing.F) {
	f.Add([]byte("a\nb\n"), "@@ -1,2 +1,2 @@\n-a\n+c\n b\n")
	f.Add([]byte("a"), "@@ -1 +1 @@\n-a\n\\ No newline at end of file\n+a\n")
	f.Fuzz(func(t *testing.T, cur []byte, diff string) {
		_, _ = applyHunks(cur, diff) // never panics
	})
}

func TestSplitWords(t *testing.T) {
	tests := []struct {
		in   string
		want []string
		ok   bool
	}{
		{`/bin/bash -lc 'echo hello > hello.txt && cat hello.txt'`, []string{"/bin/bash", "-lc", "echo hello > hello.txt && cat hello.txt"}, true},
		{`/bin/bash -lc ls`, []string{"/bin/bash", "-lc", "ls"}, true},
		{`/bin/bash -lc 'echo '"'"'quoted'"'"''`, []string{"/bin/bash", "-lc", "echo 'quoted'"}, true},
		{`a "b \"c\" $d" e\ f`, []string{"a", `b "c" $d`, "e f"}, true},
		{`''`, []string{""}, true},
		{`echo 'open`, nil, false},
		{`echo "open`, nil, false},
	}
	for _, tt := range tests {
		got, ok := splitWords(tt.in)
		if ok != tt.ok || !cmp.Equal(got, tt.want) {
			t.Errorf("splitWords(%q) = %q %v, want %q %v", tt.in, got, ok, tt.want, tt.ok)
		}
	}
}
