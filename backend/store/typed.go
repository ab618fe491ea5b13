package store

import (
	"context"
	"database/sql"
	"fmt"

	"agenthub/backend"
)

// EventsOfType returns the committed events of one type of a run, by
// sequence. It is for the few durable facts a run reads back when it is
// activated again (e.g. its compactions), never for replay (see [Store.Events]).
func (s *Store) EventsOfType(ctx context.Context, runID string, typ backend.EventType) ([]backend.Event, error) {
	rows, err := s.r.QueryContext(ctx, `SELECT seq, id, session_id, agent_id, ts, schema_version, payload, sum
		FROM events WHERE run_id = ? AND type = ? ORDER BY seq`, runID, string(typ))
	if err != nil {
		return nil, fmt.Errorf("read %s events of %s: %w", typ, runID, err)
	}
	defer rows.Close()
	var out []backend.Event
	for rows.Next() {
		ev := backend.Event{RunID: runID, Type: typ}
		var payload string
		var sum sql.NullInt64
		if err := rows.Scan(&ev.Sequence, &ev.ID, &ev.SessionID, &ev.AgentID, &ev.Timestamp, &ev.SchemaVersion,
			&payload, &sum); err != nil {
			return nil, fmt.Errorf("read %s events of %s: %w", typ, runID, err)
		}
		ev.Payload = []byte(payload)
		var stored any
		if sum.Valid {
			stored = sum.Int64
		}
		if err := checkSum(&ev, stored); err != nil {
			return nil, err
		}
		out = append(out, ev)
	}
	return out, rows.Err()
}
