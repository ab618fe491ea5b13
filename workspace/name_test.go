package workspace

import (
	"errors"
	"strings"
	"testing"
)

func TestClean(t *testing.T) {
	tests := []struct {
		in, want string
		win      bool
	}{
		{"", ".", false},
		{".", ".", false},
		{"./", ".", false},
		{"a", "a", false},
		{"a/b/c.go", "a/b/c.go", false},
		{"a//b/./c", "a/b/c", false},
		{"a/b/", "a/b", false},
		{"sub/~x", "sub/~x", false},
		{"a..b", "a..b", false},
		{"..a", "..a", false},
		{"x.", "x.", false},     // fine on Unix
		{"con", "con", false},   // fine on Unix
		{"ab:c", "ab:c", false}, // fine on Unix
		{"src/main.go", "src/main.go", true},
		{"console.log", "console.log", true},
		{"a:b", "", false}, // one letter and a colon: drive-relative
		{"ab:c", "", true},
		{"x.", "", true},
		{"con", "", true},
	}
	for _, tt := range tests {
		got, err := clean("read", tt.in, tt.win)
		if tt.want == "" {
			if !errors.Is(err, ErrOutsideRoot) {
				t.Errorf("clean(%q, win=%v) = %q, %v; want ErrOutsideRoot", tt.in, tt.win, got, err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("clean(%q, win=%v) = %q, %v; want %q", tt.in, tt.win, got, err, tt.want)
		}
	}
}

func TestCleanLimits(t *testing.T) {
	ok := strings.Repeat("a", maxComponentBytes)
	if _, err := clean("read", ok, false); err != nil {
		t.Errorf("a %d-byte name must pass: %v", maxComponentBytes, err)
	}
	if _, err := clean("read", ok+"a", false); !errors.Is(err, ErrOutsideRoot) {
		t.Errorf("a %d-byte name must fail: %v", maxComponentBytes+1, err)
	}
	deep := strings.Repeat("d/", maxComponents-1) + "f"
	if _, err := clean("read", deep, false); err != nil {
		t.Errorf("%d components must pass: %v", maxComponents, err)
	}
	if _, err := clean("read", "d/"+deep, false); !errors.Is(err, ErrOutsideRoot) {
		t.Errorf("%d components must fail: %v", maxComponents+1, err)
	}
}

func TestClassify(t *testing.T) {
	tests := []struct {
		path string
		want Class
	}{
		{"src/main.go", ClassNone},
		{".github/workflows/ci.yml", ClassNone},
		{".gitignore", ClassNone},
		{".gitattributes", ClassNone},
		{"git/x", ClassNone},
		{".env.example", ClassNone},
		{".env.sample", ClassNone},
		{"id_rsa.pub", ClassNone},
		{"keys.go", ClassNone},
		{"docs/.agenthub.md", ClassNone},
		{"README", ClassNone},

		{".git", ClassGit},
		{".git/config", ClassGit},
		{".git/hooks/pre-commit", ClassGit},
		{"vendor/lib/.git/config", ClassGit},
		{".GIT/config", ClassGit},
		{".Git/HEAD", ClassGit},
		{".g\u0131t/config", ClassGit},           // dotless i
		{".g\u0130t/config", ClassGit},           // capital I with dot
		{".g\u200cit/config", ClassGit},          // zero-width non-joiner (HFS+ ignores it)
		{".gi\ufefft/config", ClassGit},          // BOM
		{"\uff0egit/config", ClassGit},           // fullwidth full stop
		{".\uff47\uff49\uff54/config", ClassGit}, // fullwidth letters
		{"GIT~1/config", ClassGit},               // NTFS 8.3 short name
		{"git~2/config", ClassGit},
		{".git./config", ClassGit}, // Windows drops trailing dots
		{".git /config", ClassGit}, // and spaces
		{".git::$INDEX_ALLOCATION/config", ClassGit},
		{`.git\config`, ClassGit},

		{".agenthub/policy.toml", ClassPolicy},
		{".AgentHub/policy.toml", ClassPolicy},
		{".agenthub", ClassPolicy},
		{".agent\u200dhub/policy.toml", ClassPolicy},
		{"AGENTH~1/policy.toml", ClassPolicy},
		{".agenthub./policy.toml", ClassPolicy},

		{".env", ClassSecret},
		{".ENV", ClassSecret},
		{".env.local", ClassSecret},
		{".env.production", ClassSecret},
		{"config/.env", ClassSecret},
		{".\u0435nv", ClassNone}, // Cyrillic ie: a different name everywhere
		{".e\u200bnv", ClassSecret},
		{"ENV~1", ClassSecret},
		{".ssh/config", ClassSecret},
		{"home/.ssh/known_hosts", ClassSecret},
		{"id_rsa", ClassSecret},
		{"keys/id_ed25519", ClassSecret},
		{"server.pem", ClassSecret},
		{"tls/server.KEY", ClassSecret},
		{"tls/server.\u212aey", ClassSecret}, // KELVIN SIGN folds to k
		{"cert.p12", ClassSecret},
		{"release.keystore", ClassSecret},
		{".netrc", ClassSecret},
		{".git-credentials", ClassSecret},
		{".aws/credentials", ClassSecret},
		{".docker/config.json", ClassSecret},
		{".gnupg/pubring.kbx", ClassSecret},
		{"vault.kdbx", ClassSecret},
		{"credentials.json", ClassSecret},
	}
	for _, tt := range tests {
		if got := Classify(tt.path); got != tt.want {
			t.Errorf("Classify(%q) = %q, want %q", tt.path, got, tt.want)
		}
	}
}

// TestProtectedWrites: Apply refuses every protected class, in every
// spelling, with ErrProtected, and writes nothing.
func TestProtectedWrites(t *testing.T) {
	f := newFixture(t)
	store := newStore(t)
	before := snapshot(t, f.root)
	for _, p := range []string{
		".git/config", ".GIT/hooks/pre-commit", ".g\u0131t/x", "GIT~1/x", ".git./x",
		".agenthub/policy.toml", ".AGENTHUB/policy.toml", ".agent\u200bhub/x",
		".env", ".env.local", "id_rsa", ".ssh/authorized_keys", "sub/.git/config",
	} {
		_, err := Apply(f.fs, []Change{{Path: p, PreimageSHA256: Absent, NewContent: []byte("x")}}, store)
		if !errors.Is(err, ErrProtected) {
			t.Errorf("Apply(%q) = %v, want ErrProtected", p, err)
		}
	}
	after := snapshot(t, f.root)
	if len(before) != len(after) {
		t.Errorf("protected writes changed the workspace: %v", keys(after))
	}
}
