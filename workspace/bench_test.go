package workspace

import (
	"bytes"
	"fmt"
	"testing"
)

// BenchmarkApply10Files: one atomic apply of ten 10 KB files (verify, store
// pre-images, stage with fsync, re-verify, rename, fsync directories).
func BenchmarkApply10Files(b *testing.B) {
	f := newFixture(b)
	store, err := NewCheckpointStore(b.TempDir(), 0)
	if err != nil {
		b.Fatal(err)
	}
	hashes := make([]string, 10)
	for i := range hashes {
		hashes[i] = Absent
	}
	n := 0
	for b.Loop() {
		changes := make([]Change, 10)
		for i := range changes {
			content := bytes.Repeat([]byte(fmt.Sprintf("%08d-%d\n", n, i)), 1024)
			changes[i] = Change{Path: fmt.Sprintf("bench/f%d.txt", i), PreimageSHA256: hashes[i], NewContent: content}
			hashes[i] = Hash(content)
		}
		if _, err := Apply(f.fs, changes, store); err != nil {
			b.Fatal(err)
		}
		n++
	}
}

// BenchmarkReadFile: a rooted, link-checked read of a 10 KB file.
func BenchmarkReadFile(b *testing.B) {
	f := newFixture(b)
	mustWrite(b, f.root+"/r.txt", string(bytes.Repeat([]byte("x"), 10240)))
	for b.Loop() {
		if _, err := f.fs.ReadFile("r.txt"); err != nil {
			b.Fatal(err)
		}
	}
}
