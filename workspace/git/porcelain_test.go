package git

import (
	"errors"
	"strings"
	"testing"

	"github.com/go-git/go-git/v5/plumbing"
	"github.com/go-git/go-git/v5/plumbing/filemode"
	"github.com/go-git/go-git/v5/plumbing/object"
	"github.com/google/go-cmp/cmp"
)

const (
	zeroID = "0000000000000000000000000000000000000000"
	someID = "22e2ef36b4d0d367c4d400ed5339543ebdc7f4ff"
)

// z joins records as `git status -z` prints them.
func z(recs ...string) string { return strings.Join(recs, "\x00") + "\x00" }

func TestParsePorcelainV2(t *testing.T) {
	tracked := func(xy, sub, p string) string {
		return "1 " + xy + " " + sub + " 100644 100644 100644 " + someID + " " + someID + " " + p
	}
	tests := []struct {
		name  string
		out   string
		oid   string
		files map[string]candidate
		err   error
	}{
		{name: "empty output", out: "", files: map[string]candidate{}},
		{
			name:  "headers only, unborn branch",
			out:   z("# branch.oid (initial)", "# branch.head main"),
			files: map[string]candidate{},
		},
		{
			name: "ordinary records and untracked, names with spaces, newlines and unicode",
			out: z("# branch.oid "+someID, "# branch.head main", "# branch.ab +0 -0",
				tracked(".M", "N...", "mod ified.txt"), tracked("M.", "N...", "staged"), tracked(".D", "N...", "dir/gone"),
				tracked("D.", "N...", "removed"), tracked("A.", "N...", "new\nline"), tracked(".A", "N...", "ita"),
				"? ünï/☃ file", "? -dash", `? back\slash`),
			oid: someID,
			files: map[string]candidate{
				"mod ified.txt": {inIndex: true}, "staged": {inIndex: true, staged: true}, "dir/gone": {inIndex: true},
				"removed": {staged: true}, "new\nline": {inIndex: true, staged: true}, "ita": {inIndex: true},
				"ünï/☃ file": {}, "-dash": {}, `back\slash`: {},
			},
		},
		{
			name:  "removed from the index but still on disk: the tracked record wins",
			out:   z(tracked("D.", "N...", "kept"), "? kept"),
			files: map[string]candidate{"kept": {staged: true}},
		},
		{
			name: "rename record: the original path is the next field",
			out: z("2 R. N... 100644 100644 100644 "+someID+" "+someID+" R100 to dir/new name", "old\nname",
				"? after"),
			files: map[string]candidate{"to dir/new name": {inIndex: true, staged: true}, "old\nname": {staged: true},
				"after": {}},
		},
		{
			name: "unmerged records",
			out: z("u UU N... 100644 100644 100644 100644 "+someID+" "+someID+" "+someID+" con flict",
				"u AA N... 000000 100644 100644 100644 "+zeroID+" "+someID+" "+someID+" both"),
			files: map[string]candidate{"con flict": {inIndex: true, staged: true}, "both": {inIndex: true, staged: true}},
		},
		{
			name:  "submodules and nested repositories are left out",
			out:   z(tracked(".M", "S.M.", "sub"), tracked("A.", "SC..", "new-sub"), "? nested/", "! ignored.log"),
			files: map[string]candidate{},
		},
		{name: "not NUL-terminated", out: z("? a") + "? b", err: errAny},
		{name: "human format", out: "On branch main\nnothing to commit\n", err: errAny},
		{name: "unknown record type", out: z("3 what"), err: errAny},
		{name: "ordinary record with too few fields", out: z("1 .M N... 100644 " + someID + " x"), err: errAny},
		{name: "bad XY", out: z(tracked("M", "N...", "x")), err: errAny},
		{name: "rename without its original path", out: "2 R. N... 100644 100644 100644 " + someID + " " + someID + " R100 x\x00", err: errAny},
		{name: "path escaping the tree", out: z("? ../outside"), err: ErrBadPath},
		{name: "absolute path", out: z(tracked(".M", "N...", "/etc/passwd")), err: ErrBadPath},
		{name: "unclean path", out: z("? a//b"), err: ErrBadPath},
		{name: "empty path", out: z("? "), err: ErrBadPath},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			pc, err := parsePorcelainV2([]byte(tt.out))
			switch {
			case tt.err == errAny && err == nil:
				t.Fatalf("parsed %+v, want an error", pc)
			case tt.err == errAny:
				return
			case !errors.Is(err, tt.err):
				t.Fatalf("err = %v, want %v", err, tt.err)
			case err != nil:
				return
			}
			if pc.oid != tt.oid {
				t.Errorf("oid = %q, want %q", pc.oid, tt.oid)
			}
			// What HEAD holds is checked by TestHeadOf.
			got := map[string]candidate{}
			for p, c := range pc.files {
				got[p] = candidate{inIndex: c.inIndex, staged: c.staged}
			}
			if diff := cmp.Diff(tt.files, got, cmp.AllowUnexported(candidate{})); diff != "" {
				t.Errorf("files (-want +got):\n%s", diff)
			}
		})
	}
}

func TestHeadOf(t *testing.T) {
	tests := []struct {
		mode, hash string
		want       *object.TreeEntry
		known      bool
	}{
		{"100644", someID, &object.TreeEntry{Mode: filemode.Regular, Hash: plumbing.NewHash(someID)}, true},
		{"100755", someID, &object.TreeEntry{Mode: filemode.Executable, Hash: plumbing.NewHash(someID)}, true},
		{"120000", someID, &object.TreeEntry{Mode: filemode.Symlink, Hash: plumbing.NewHash(someID)}, true},
		{"000000", zeroID, nil, true},
		{"100644", "abc", nil, false},
		{"100644", strings.ToUpper(someID), nil, false},
		{"10064", someID, nil, false},
		{"10064x", someID, nil, false},
	}
	for _, tt := range tests {
		got, known := headOf(tt.mode, tt.hash)
		if known != tt.known || !cmp.Equal(got, tt.want) {
			t.Errorf("headOf(%s, %s) = %+v, %v; want %+v, %v", tt.mode, tt.hash, got, known, tt.want, tt.known)
		}
	}
	pc, err := parsePorcelainV2([]byte(z("1 D. N... 100644 000000 000000 "+someID+" "+zeroID+" kept", "? kept", "? new")))
	if err != nil {
		t.Fatal(err)
	}
	if c := pc.files["kept"]; !c.headKnown || c.head == nil || c.head.Hash.String() != someID {
		t.Errorf("kept = %+v: the tracked record's HEAD entry was lost", c)
	}
	if c := pc.files["new"]; !c.headKnown || c.head != nil {
		t.Errorf("new = %+v: an untracked path alone is known to be absent from HEAD", c)
	}
	// A deleted intent-to-add and a deleted empty HEAD file print alike.
	pc, err = parsePorcelainV2([]byte(z("1 .D N... 100644 100644 000000 " + emptyBlob + " " + emptyBlob + " ita-or-empty")))
	if err != nil {
		t.Fatal(err)
	}
	if c := pc.files["ita-or-empty"]; c.headKnown {
		t.Errorf("ita-or-empty = %+v: the record's HEAD entry is ambiguous and must be looked up", c)
	}
}

// errAny marks a case that must fail, whatever the error.
var errAny = errors.New("any error")

// FuzzParsePorcelainV2: any output either fails or yields only paths that
// stay inside the work tree.
func FuzzParsePorcelainV2(f *testing.F) {
	f.Add([]byte(z("# branch.oid "+someID, "1 .M N... 100644 100644 100644 "+someID+" "+someID+" a b", "? c")))
	f.Add([]byte(z("2 R. N... 100644 100644 100644 "+someID+" "+someID+" R100 new", "old")))
	f.Add([]byte(z("u UU N... 100644 100644 100644 100644 " + someID + " " + someID + " " + someID + " x")))
	f.Add([]byte("? ../x\x00"))
	f.Fuzz(func(t *testing.T, out []byte) {
		pc, err := parsePorcelainV2(out)
		if err != nil {
			return
		}
		for p := range pc.files {
			if !repoPath(p) {
				t.Fatalf("accepted path %q", p)
			}
		}
	})
}
