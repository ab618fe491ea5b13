package agentbin

import (
	"os"
	"testing"
)

// BenchmarkHashProgram: hashing an agent CLI in a new process, with no
// record (read the whole file) and with the record in the database (one
// stat and one indexed read). AGENTHUB_CLAUDE_BIN names the program (the
// native Claude Code binary is 381 MB); without it, this test binary.
func BenchmarkHashProgram(b *testing.B) {
	bin := os.Getenv("AGENTHUB_CLAUDE_BIN")
	if bin == "" {
		bin, _ = os.Executable()
	}
	st, err := openStoreB(b)
	if err != nil {
		b.Fatal(err)
	}
	b.Run("read-whole-file", func(b *testing.B) {
		for b.Loop() {
			forget()
			if _, err := Hash(bin); err != nil {
				b.Fatal(err)
			}
		}
	})
	release := UseCache(st)
	defer release()
	forget()
	if _, err := Hash(bin); err != nil { // records it
		b.Fatal(err)
	}
	b.Run("recorded-in-database", func(b *testing.B) {
		for b.Loop() {
			forget()
			if _, err := Hash(bin); err != nil {
				b.Fatal(err)
			}
		}
	})
}
