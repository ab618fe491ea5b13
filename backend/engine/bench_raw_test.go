package engine

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"path/filepath"
	"testing"
	"time"

	"agenthub/backend"
	"agenthub/backend/store"
)

// The raw-insert reference of the store's benchmarks, repeated here so that
// each engine op is paired with one on the same machine at the same moment
// (bench/store/run.sh prints both ratios). The driver is the one the store
// registers; this package never imports it.

// rawDSN is the store's connection string (store.dsnParams).
const rawDSN = "?_foreign_keys=on&_journal_mode=WAL&_busy_timeout=5000&_txlock=immediate&_synchronous=NORMAL"

type rawRow struct {
	seq         int64
	id, ts, msg string
}

// rawRows are n run.message.delta rows shaped as the engine writes them,
// generated before the clock starts.
func rawRows(n int) []rawRow {
	rows := make([]rawRow, n)
	msgID := backend.NewID(backend.PrefixMessage)
	for i := range rows {
		p, _ := json.Marshal(messageDelta{MessageID: msgID, Text: deltaText})
		rows[i] = rawRow{seq: int64(i + 2), id: backend.NewID(backend.PrefixEvent), ts: backend.Stamp(time.Now()),
			msg: string(p)}
	}
	return rows
}

// rawFile is a freshly migrated database holding one run.
func rawFile(b *testing.B) string {
	b.Helper()
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "raw.db")
	st, err := store.Open(ctx, path)
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	if err := st.AddWorkspace(ctx, backend.Workspace{ID: "ws_1", Name: "w", Path: "/abs/w", DisplayPath: "~/w"},
		store.By{Actor: "bench", Surface: backend.SurfaceCLI}); err != nil {
		b.Fatal(err)
	}
	_, err = st.Do(ctx, func(tx *store.Tx) error {
		if err := tx.CreateSession("ses_raw", "ws_1", ""); err != nil {
			return err
		}
		_, err := tx.CreateRun(store.RunRecord{ID: "run_raw", SessionID: "ses_raw", WorkspaceID: "ws_1",
			Profile: "bench", AgentID: "bench", Runtime: "native", Task: "t"}, nil)
		return err
	})
	if err != nil {
		b.Fatal(err)
	}
	return path
}

// rawInsert is the reference: one prepared insert per row through
// database/sql, 1,000 rows per transaction.
func rawInsert(path string, rows []rawRow) error {
	db, err := sql.Open("sqlite3", "file:"+path+rawDSN)
	if err != nil {
		return err
	}
	defer db.Close()
	db.SetMaxOpenConns(1)
	stmt, err := db.Prepare(`INSERT INTO events (run_id, seq, id, type, session_id, agent_id, ts, schema_version,
		payload) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`)
	if err != nil {
		return err
	}
	defer stmt.Close()
	for start := 0; start < len(rows); start += 1000 {
		tx, err := db.Begin()
		if err != nil {
			return err
		}
		st := tx.Stmt(stmt)
		for _, r := range rows[start:min(start+1000, len(rows))] {
			if _, err := st.Exec("run_raw", r.seq, r.id, string(backend.EvMessageDelta), "ses_raw", "bench", r.ts,
				backend.SchemaVersion, r.msg); err != nil {
				return errors.Join(err, tx.Rollback())
			}
		}
		if err := tx.Commit(); err != nil {
			return err
		}
	}
	return nil
}

// meter adds up the wall and CPU time of measured sections.
type meter struct{ wall, cpu time.Duration }

func (m *meter) run(b *testing.B, fn func() error) {
	b.Helper()
	c0, t0 := cpuTime(), time.Now()
	if err := fn(); err != nil {
		b.Fatal(err)
	}
	m.wall += time.Since(t0)
	m.cpu += cpuTime() - c0
}
