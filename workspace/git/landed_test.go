package git

import (
	"testing"
)

// TestLanded: after an intended commit, the repository says whether it was
// made (HEAD on the base with exactly the blobs), not made (HEAD still the
// base), or something else happened (another commit, other content).
func TestLanded(t *testing.T) {
	dir := newRepo(t)
	write(t, dir, "a.txt", "a\n")
	write(t, dir, "gone.txt", "x\n")
	gitCmd(t, dir, "add", ".")
	gitCmd(t, dir, "commit", "-qm", "init")
	base := gitCmd(t, dir, "rev-parse", "HEAD")
	write(t, dir, "a.txt", "a changed\n")
	blob := gitCmd(t, dir, "hash-object", "a.txt")
	blobs := map[string]string{"a.txt": blob, "gone.txt": ""}
	r, err := Open(dir)
	if err != nil {
		t.Fatal(err)
	}
	check := func(want string) {
		t.Helper()
		got, err := r.Landed(base, blobs)
		if err != nil || got.State != want {
			t.Fatalf("Landed = %+v, %v; want %s", got, err, want)
		}
	}
	check(LandedNo)
	gitCmd(t, dir, "rm", "-q", "gone.txt")
	gitCmd(t, dir, "add", "a.txt")
	gitCmd(t, dir, "commit", "-qm", "the intended commit")
	check(LandedYes)
	write(t, dir, "a.txt", "someone else's\n")
	gitCmd(t, dir, "commit", "-qam", "another")
	check(LandedOther)
	gitCmd(t, dir, "reset", "-q", "--hard", base)
	write(t, dir, "a.txt", "other content\n")
	gitCmd(t, dir, "commit", "-qam", "same parent, other content")
	check(LandedOther)
}
