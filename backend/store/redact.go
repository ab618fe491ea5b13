package store

import (
	"encoding/json"
	"sync/atomic"

	"agenthub/backend"
)

// Redactor removes secrets before anything is persisted (run-model.md
// EV11, issue §4); *redact.Redactor implements it. The store depends on
// this interface, not on the package, so that it owns no secret rules.
type Redactor interface {
	String(s string) string
	JSON(b []byte) []byte
}

// redactorSlot holds the store's redactor. It is set once by the
// composition root, before the first write, and read by the committer.
type redactorSlot struct{ p atomic.Pointer[Redactor] }

// SetRedactor makes every later write pass its free text and JSON (event
// payloads, messages, tool calls and results, tickets and decisions,
// checkpoints, failure messages, grants, audit data) through r. Call it
// right after Open: writes before it are stored as they are.
func (s *Store) SetRedactor(r Redactor) {
	if r == nil {
		s.red.p.Store(nil)
		return
	}
	s.red.p.Store(&r)
}

// Redact returns text as the store would persist it: with secrets replaced
// when a redactor is set. The engine uses it to refuse grants whose pattern
// would carry a secret into the policy file.
func (s *Store) Redact(text string) string { return s.red.text(text) }

// text redacts free text; without a redactor it returns s.
func (rs *redactorSlot) text(s string) string {
	if p := rs.p.Load(); p != nil && s != "" {
		return (*p).String(s)
	}
	return s
}

// message redacts a message's arguments (a command, a path) into a copy.
func (rs *redactorSlot) message(m *backend.Text) *backend.Text {
	if m == nil || rs.p.Load() == nil {
		return m
	}
	out := &backend.Text{Key: m.Key, Args: make(map[string]string, len(m.Args))}
	for k, v := range m.Args {
		out.Args[k] = rs.text(v)
	}
	return out
}

// json redacts a JSON document; without a redactor it returns b.
func (rs *redactorSlot) json(b json.RawMessage) json.RawMessage {
	if p := rs.p.Load(); p != nil && len(b) > 0 {
		return (*p).JSON(b)
	}
	return b
}

// jsonText is json for a JSON column held as a string.
func (rs *redactorSlot) jsonText(s string) string {
	if rs.p.Load() == nil {
		return s
	}
	return string(rs.json(json.RawMessage(s)))
}

// audit returns e with its data redacted (AU2: data is secret-free). The
// hash is computed afterwards, over exactly what is stored.
func (rs *redactorSlot) audit(e backend.AuditEntry) backend.AuditEntry {
	if rs.p.Load() == nil || len(e.Data) == 0 {
		return e
	}
	raw, err := json.Marshal(e.Data)
	if err != nil {
		return e // appendAudit reports the encoding error
	}
	clean := rs.json(raw)
	if string(clean) == string(raw) {
		return e
	}
	var data map[string]any
	if err := json.Unmarshal(clean, &data); err != nil {
		// The redactor always returns valid JSON for valid JSON; never keep
		// data it could not clean.
		data = map[string]any{"redacted": true}
	}
	e.Data = data
	return e
}
