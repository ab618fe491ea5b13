package store

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"io"

	"github.com/mattn/go-sqlite3"

	"agenthub/backend"
)

// eventsQuery reads a run's events after a cursor. Every text column costs
// a copy and an allocation on the way into Go, the bulk of a replay's time
// (measured: SQLite finds and decodes 100,000 rows in about 70 ms of CPU,
// handing them over took 160 ms more), so it hands over as little as it
// can: the session and agent ids, the same in every event of a run, come
// back as NULL when they equal the run's; the payload comes as a BLOB,
// which the driver returns as the []byte an event holds instead of a
// string to copy again.
const eventsQuery = `SELECT seq, id, type, ts, schema_version, CAST(payload AS BLOB),
	CASE WHEN session_id = ?3 THEN NULL ELSE session_id END,
	CASE WHEN agent_id = ?4 THEN NULL ELSE agent_id END, sum
	FROM events WHERE run_id = ?1 AND seq > ?2 ORDER BY seq LIMIT ?5`

// Events returns committed events of a run with sequence > after, ascending
// (EV8); limit <= 0 means all.
func (s *Store) Events(ctx context.Context, runID string, after int64, limit int) ([]backend.Event, error) {
	var session, agent string
	var last int64
	err := s.r.QueryRowContext(ctx, `SELECT session_id, agent_id, last_seq FROM runs WHERE id = ?`, runID).
		Scan(&session, &agent, &last)
	if err != nil && !errors.Is(err, sql.ErrNoRows) { // no run: no events, as before
		return nil, fmt.Errorf("read events of %s: %w", runID, err)
	}
	size := int(max(last-after, 0)) // sized once instead of doubled up to 100k events
	if limit > 0 {
		size = min(size, limit)
	} else {
		limit = -1
	}
	out := make([]backend.Event, 0, size)
	c, err := s.r.Conn(ctx)
	if err != nil {
		return nil, fmt.Errorf("read events of %s: %w", runID, err)
	}
	defer c.Close()
	err = c.Raw(func(dc any) error {
		conn, ok := dc.(*sqlite3.SQLiteConn)
		if !ok {
			return fmt.Errorf("reader connection is a %T", dc)
		}
		rows, err := conn.QueryContext(ctx, eventsQuery, []driver.NamedValue{{Ordinal: 1, Value: runID},
			{Ordinal: 2, Value: after}, {Ordinal: 3, Value: session}, {Ordinal: 4, Value: agent},
			{Ordinal: 5, Value: int64(limit)}})
		if err != nil {
			return err
		}
		out, err = scanEvents(rows, backend.Event{RunID: runID, SessionID: session, AgentID: agent}, out)
		return errors.Join(err, rows.Close())
	})
	if err != nil {
		return nil, fmt.Errorf("read events of %s: %w", runID, err)
	}
	return out, nil
}

// scanEvents appends the rows of eventsQuery to out; base holds the run's
// fields.
func scanEvents(rows driver.Rows, base backend.Event, out []backend.Event) ([]backend.Event, error) {
	dest := make([]driver.Value, 9)
	for {
		err := rows.Next(dest)
		if errors.Is(err, io.EOF) {
			return out, nil
		}
		if err != nil {
			return out, err
		}
		ev := base
		var ok [8]bool
		ev.Sequence, ok[0] = dest[0].(int64)
		ev.ID, ok[1] = dest[1].(string)
		var typ string
		typ, ok[2] = dest[2].(string)
		ev.Type = backend.EventType(typ)
		ev.Timestamp, ok[3] = dest[3].(string)
		var version int64
		version, ok[4] = dest[4].(int64)
		ev.SchemaVersion = int(version)
		ev.Payload, ok[5] = dest[5].([]byte)
		ok[6], ok[7] = override(&ev.SessionID, dest[6]), override(&ev.AgentID, dest[7])
		for i, good := range ok {
			if !good {
				return out, fmt.Errorf("event #%d: column %d is a %T", ev.Sequence, i, dest[i])
			}
		}
		if err := checkSum(&ev, dest[8]); err != nil { // a damaged row is reported, never served
			return out, err
		}
		out = append(out, ev)
	}
}

// override sets *field to v unless v is NULL (the run's value is kept).
func override(field *string, v driver.Value) bool {
	switch x := v.(type) {
	case nil:
		return true
	case string:
		*field = x
		return true
	}
	return false
}
