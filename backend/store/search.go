package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"unicode"

	"agenthub/backend"
)

// SearchFilter narrows a search; zero fields match everything. Dates are
// envelope timestamps (backend.TimeFormat) or their prefix (2026-11-25):
// From is inclusive, To exclusive, compared with the event's timestamp.
type SearchFilter struct {
	Query         string             // the user's words; every word must match, the last as a prefix
	WorkspaceID   string             // one workspace
	States        []backend.RunState // the run's status
	Runtime       string             // the run's runtime or profile name
	From, To      string             // the event's timestamp range
	NeedsApproval bool               // runs waiting for one of my approvals
	ChangedFile   string             // runs that changed this workspace-relative path
	RunID         string             // one run
	Limit         int                // default 50, at most 500
}

// SearchHit is one matching event: where it is and the words that matched.
type SearchHit struct {
	RunID       string
	Sequence    int64
	Type        backend.EventType
	Timestamp   string
	Snippet     []SnippetPart // the matched text around the match, matches marked
	Rank        float64       // bm25: lower is better
	Task        string
	State       backend.RunState
	WorkspaceID string
	Profile     string
	Runtime     string
	CreatedAt   string
}

// SnippetPart is a run of snippet text; Match marks the words that matched.
type SnippetPart struct {
	Text  string `json:"text"`
	Match bool   `json:"match,omitempty"`
}

// ErrEmptyQuery is returned for a query without a word to look for.
var ErrEmptyQuery = &backend.Error{Code: backend.CodeInvalidInput, Message: "type a word to search for",
	Next: "Search for a word of the task, a message, a command, a file path or an approval reason."}

// Search finds events whose text matches every word of f.Query, best first
// (bm25), with a highlighted snippet each.
func (s *Store) Search(ctx context.Context, f SearchFilter) ([]SearchHit, error) {
	match := MatchExpr(f.Query)
	if match == "" {
		return nil, ErrEmptyQuery
	}
	where := []string{"search_text MATCH ?"}
	args := []any{match}
	if f.WorkspaceID != "" {
		where, args = append(where, "r.workspace_id = ?"), append(args, f.WorkspaceID)
	}
	if len(f.States) > 0 {
		where = append(where, "r.state IN (?"+strings.Repeat(",?", len(f.States)-1)+")")
		for _, st := range f.States {
			args = append(args, string(st))
		}
	}
	if f.Runtime != "" {
		where, args = append(where, "(r.runtime = ? OR r.profile = ?)"), append(args, f.Runtime, f.Runtime)
	}
	if f.From != "" {
		where, args = append(where, "e.ts >= ?"), append(args, f.From)
	}
	if f.To != "" {
		where, args = append(where, "e.ts < ?"), append(args, f.To)
	}
	if f.RunID != "" {
		where, args = append(where, "e.run_id = ?"), append(args, f.RunID)
	}
	if f.NeedsApproval {
		where = append(where, "EXISTS (SELECT 1 FROM approvals a WHERE a.run_id = r.id AND a.status = 'pending')")
	}
	if f.ChangedFile != "" {
		where = append(where, `EXISTS (SELECT 1 FROM events pe, json_each(pe.payload, '$.files') pf
			WHERE pe.run_id = r.id AND pe.type = 'run.patch.applied' AND json_extract(pf.value, '$.path') = ?)`)
		args = append(args, f.ChangedFile)
	}
	limit := f.Limit
	if limit <= 0 {
		limit = 50
	}
	limit = min(limit, 500)
	// The best matches first (FTS5 sorts by its rank column, bm25), then
	// the text of those alone, looked up by rowid: FTS5's snippet() needs the
	// MATCH again, which for each row walks the term's whole doclist (a word
	// in 100,000 messages took 600 ms, in the ranked query seconds). The
	// snippet is cut here (cutSnippet). The joins are in the ranked query
	// only when a filter needs them.
	from := "search_text"
	if len(where) > 1 {
		from += " JOIN events e ON e.pos = search_text.rowid JOIN runs r ON r.id = e.run_id"
	}
	q := `WITH top AS (SELECT search_text.rowid AS pos, search_text.rank AS rank FROM ` + from + `
			WHERE ` + strings.Join(where, " AND ") + ` ORDER BY rank LIMIT ?)
		SELECT e.run_id, e.seq, e.type, e.ts, search_text.body, top.rank, r.task, r.state, r.workspace_id, r.profile,
			r.runtime, r.created_at
		FROM top CROSS JOIN search_text ON search_text.rowid = top.pos CROSS JOIN events e ON e.pos = top.pos
		CROSS JOIN runs r ON r.id = e.run_id
		ORDER BY top.rank`
	args = append(args, limit)
	terms := queryWords(f.Query)
	rows, err := s.r.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	defer rows.Close()
	var out []SearchHit
	for rows.Next() {
		var h SearchHit
		var snip string
		if err := rows.Scan(&h.RunID, &h.Sequence, &h.Type, &h.Timestamp, &snip, &h.Rank, &h.Task, &h.State,
			&h.WorkspaceID, &h.Profile, &h.Runtime, &h.CreatedAt); err != nil {
			return nil, fmt.Errorf("search: %w", err)
		}
		h.Snippet = cutSnippet(snip, terms)
		out = append(out, h)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	return out, nil
}

// MatchExpr turns what a user typed into an FTS5 expression that cannot be a
// syntax error: every word is quoted (FTS5's operators and punctuation lose
// their meaning), all must match, and the last one matches as a prefix, so
// results follow the typing. "" when nothing searchable is left.
func MatchExpr(q string) string {
	words := strings.FieldsFunc(q, func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_'
	})
	if len(words) == 0 {
		return ""
	}
	parts := make([]string, len(words))
	for i, w := range words {
		parts[i] = `"` + w + `"`
	}
	parts[len(parts)-1] += "*"
	return strings.Join(parts, " ")
}

// queryWords are the words of a query, folded to lower case, as MatchExpr
// reads them.
func queryWords(q string) []string {
	words := strings.FieldsFunc(q, notWordRune)
	for i, w := range words {
		words[i] = strings.ToLower(w)
	}
	return words
}

func notWordRune(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) && r != '_' }

// snippetWords is how many words a snippet shows around its first match.
const snippetWords = 16

// cutSnippet is the words of text around the first word that matches the
// query (the last query word as a prefix, as the search matched it), the
// matching words marked; the start of the text when no word matches here
// (a match FTS5 found by folding diacritics).
func cutSnippet(text string, terms []string) []SnippetPart {
	type word struct{ from, to int }
	var words []word
	start := -1
	for i, r := range text {
		if notWordRune(r) {
			if start >= 0 {
				words = append(words, word{start, i})
				start = -1
			}
		} else if start < 0 {
			start = i
		}
	}
	if start >= 0 {
		words = append(words, word{start, len(text)})
	}
	matches := func(w string) bool {
		w = strings.ToLower(w)
		for i, t := range terms {
			if w == t || (i == len(terms)-1 && strings.HasPrefix(w, t)) {
				return true
			}
		}
		return false
	}
	first := 0
	for i, w := range words {
		if matches(text[w.from:w.to]) {
			first = i
			break
		}
	}
	lo := max(0, first-snippetWords/4)
	hi := min(len(words), lo+snippetWords)
	if len(words) == 0 {
		return []SnippetPart{{Text: text}}
	}
	var out []SnippetPart
	add := func(s string, match bool) {
		if s == "" {
			return
		}
		if n := len(out); n > 0 && !out[n-1].Match && !match {
			out[n-1].Text += s
			return
		}
		out = append(out, SnippetPart{Text: s, Match: match})
	}
	if lo > 0 {
		add("…", false)
	}
	pos := words[lo].from
	for _, w := range words[lo:hi] {
		add(text[pos:w.from], false)
		add(text[w.from:w.to], matches(text[w.from:w.to]))
		pos = w.to
	}
	if hi < len(words) {
		add(text[pos:words[hi].from]+"…", false)
	} else {
		add(text[pos:], false)
	}
	return out
}

// requireFTS5 refuses a SQLite built without FTS5 (a build without the
// sqlite_fts5 tag), before any migration runs: search would be missing, and
// migration 00005 would fail with "no such module: fts5" after a backup.
func requireFTS5(ctx context.Context, db *sql.DB) error {
	var n int
	err := db.QueryRowContext(ctx, `SELECT count(*) FROM pragma_compile_options WHERE compile_options = 'ENABLE_FTS5'`).
		Scan(&n)
	if err != nil {
		return fmt.Errorf("open store: read SQLite compile options: %w", err)
	}
	if n == 0 {
		return &backend.Error{Code: backend.FailInternal, Err: errors.New("SQLite without FTS5"),
			Message: "This AgentHub was built without SQLite's full-text search (FTS5), which its database " +
				"needs: build and test with -tags sqlite_fts5.",
			Next: "Build and test with the sqlite_fts5 tag: `go build -tags sqlite_fts5` / `go test -tags " +
				"sqlite_fts5 ./...` (make build and make test pass it)."}
	}
	return nil
}
