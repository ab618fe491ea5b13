package backend

// Workspace is an allowlisted directory. Path is absolute and canonical; it is
// kept in SQLite only to resolve the root and is never shown or exported as is:
// surfaces show DisplayPath, with the home directory rewritten to "~".
type Workspace struct {
	ID          string `json:"id"`
	Name        string `json:"name"`
	Path        string `json:"-"`
	DisplayPath string `json:"displayPath"`
	AddedAt     string `json:"addedAt"`
	// Missing is set when the directory is gone from disk (deleted or
	// moved): it is listed so the user sees it, but no run may start in it.
	Missing bool `json:"missing,omitempty"`
}

// AuditEntry is one link of the tamper-evident audit chain (AU2):
// Hash = SHA-256(PrevHash || canonical JSON of the entry without Hash).
type AuditEntry struct {
	Seq         int64          `json:"seq"`
	At          string         `json:"at"`
	Actor       string         `json:"actor"`   // OS user | policy | engine
	Surface     Surface        `json:"surface"` // window | browser | cli | engine
	Kind        string         `json:"kind"`
	RunID       string         `json:"runId,omitempty"`
	ToolCallID  string         `json:"toolCallId,omitempty"`
	SubjectHash string         `json:"subjectHash,omitempty"`
	Data        map[string]any `json:"data"`
	PrevHash    string         `json:"prevHash"`
	Hash        string         `json:"hash"`
}

// GenesisHash is the PrevHash of the first audit entry.
const GenesisHash = "0000000000000000000000000000000000000000000000000000000000000000"
