package store

import "fmt"

// PendingTwins returns the other pending tickets of a run that ask for
// exactly the same thing (an equal subject hash), in creation order: the
// reviewer sees them as one item and one decision resolves them all (AP13).
func (t *Tx) PendingTwins(tk Ticket) ([]Ticket, error) {
	rows, err := t.tx.QueryContext(t.ctx, ticketSelect+` WHERE run_id = ? AND subject_hash = ? AND ticket_kind = ?
		AND status = 'pending' AND id <> ? ORDER BY created_at, rowid`, tk.RunID, tk.SubjectHash, tk.TicketKind, tk.ID)
	if err != nil {
		return nil, fmt.Errorf("list the twins of ticket %s: %w", tk.ID, err)
	}
	defer rows.Close()
	var out []Ticket
	for rows.Next() {
		twin, err := scanTicket(rows)
		if err != nil {
			return nil, err
		}
		out = append(out, twin)
	}
	return out, rows.Err()
}
