package workspace

import "testing"

func newStore(t testing.TB) *CheckpointStore {
	t.Helper()
	s, err := NewCheckpointStore(t.TempDir(), 0)
	if err != nil {
		t.Fatal(err)
	}
	return s
}
