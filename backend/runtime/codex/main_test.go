package codex

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package when a session leaves a goroutine behind: the
// reader, the exit watcher and every answer end with the process.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
