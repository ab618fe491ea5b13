package store

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"agenthub/backend"
	"agenthub/backend/redact"
	"agenthub/backend/redact/redacttest"
)

// TestNoCorpusSecretReachesTheFiles writes every secret of the shared
// corpus (backend/redact/testdata) through the real store into a real
// SQLite file, the way runs write them: a tool result, an assistant
// message, an audit entry, and a command's output streamed as deltas cut
// by redact.Stream in 32 KiB chunks of one long line. Then it scans the
// bytes of the database, its -wal and -shm files and an export of the
// run's events for every 16-byte piece of every secret. A registered
// gateway token (no known format) is one of the secrets.
func TestNoCorpusSecretReachesTheFiles(t *testing.T) {
	secrets, err := redacttest.Secrets()
	if err != nil {
		t.Fatal(err)
	}
	gateway := "gw" + "local-QmT4xw9ZpL2vK8rN5sJ3dH7f"
	redact.Register(gateway)
	secrets = append(secrets, redacttest.Secret{Name: "registered_gateway_token", Format: "log",
		Secret: gateway, Text: "the key you configured is " + gateway + ", keep it safe"})

	s, path := openTest(t)
	s.SetRedactor(redact.New())
	newRun(t, s, "run_1")
	ctx := t.Context()
	var long strings.Builder // one line of output over 64 KiB, every secret inside
	for i, c := range secrets {
		if _, err := s.Do(ctx, func(tx *Tx) error {
			if _, err := tx.Append("run_1", backend.EvToolResult, map[string]string{"content": c.Text}); err != nil {
				return err
			}
			if _, err := tx.AddMessages("ses_run_1", "run_1", i+1, -1,
				[]backend.Message{{Role: backend.RoleAssistant, Text: c.Text}}); err != nil {
				return err
			}
			_, err := tx.Audit(backend.AuditEntry{Actor: "engine", Surface: backend.SurfaceEngine, Kind: "x",
				Data: map[string]any{"note": c.Text}})
			return err
		}); err != nil {
			t.Fatalf("%s: %v", c.Name, err)
		}
		// Key blocks span lines, and a .pgpass entry is a line of its own,
		// by nature: the long line holds every other format.
		if !strings.Contains(c.Text, "-----BEGIN") && c.Format != "pgpass" {
			long.WriteString(strings.ReplaceAll(c.Text, "\n", ";") + `,{"id":1234,"name":"widget"},`)
			long.WriteString(strings.Repeat("0123456789abcdef,", 60))
		}
	}
	line := long.String() + "\n"
	if len(line) < 64<<10 {
		t.Fatalf("the streamed line is %d bytes, want more than 64 KiB", len(line))
	}
	var cut redact.Stream
	emitted := make(chan error, 16)
	emits := 0
	emit := func(text string) {
		if text == "" {
			return
		}
		emits++
		s.Emit("run_1", backend.EvToolDelta, map[string]string{"toolCallId": "call_1", "text": text},
			func(_ []backend.Event, err error) { emitted <- err })
	}
	for rest := line; rest != ""; {
		n := min(32<<10, len(rest))
		emit(cut.Push(rest[:n]))
		rest = rest[n:]
	}
	emit(cut.Flush())
	for range emits {
		if err := <-emitted; err != nil {
			t.Fatal(err)
		}
	}

	events, err := s.Events(ctx, "run_1", 0, 0)
	if err != nil {
		t.Fatal(err)
	}
	export, err := json.Marshal(events)
	if err != nil {
		t.Fatal(err)
	}
	exportPath := filepath.Join(t.TempDir(), "run_1.json")
	if err := os.WriteFile(exportPath, export, 0o600); err != nil {
		t.Fatal(err)
	}
	files := []string{path, path + "-wal", path + "-shm", exportPath}
	scan := func(when string) {
		for _, f := range files {
			data, err := os.ReadFile(f)
			if os.IsNotExist(err) {
				continue
			}
			if err != nil {
				t.Fatal(err)
			}
			for _, c := range secrets {
				if leaks := c.Leaks(data); len(leaks) > 0 {
					t.Errorf("%s: %s holds %s in clear (%d pieces, e.g. %q)", when, filepath.Base(f), c.Name, len(leaks), leaks[0])
				}
			}
		}
	}
	scan("open")
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	scan("closed")
	if !strings.Contains(string(export), "[REDACTED:") {
		t.Error("no redaction marker in the export: the test wrote nothing it should have redacted")
	}
}
