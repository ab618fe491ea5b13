package diffview

import (
	"errors"
	"time"
)

// Sentinel errors; callers branch on them with errors.Is.
var (
	// ErrConflict means the bytes a patch expects are not the bytes present.
	ErrConflict = errors.New("patch does not match the file")
	// ErrNotText means the diff has no hunks to apply: it is binary or omitted.
	ErrNotText = errors.New("diff is binary or omitted and has no hunks to apply")
	// ErrInvalid means the input (a path, a mode, a hunk index) is malformed.
	ErrInvalid = errors.New("invalid diff input")
)

// Status is what happened to a file, as the UI labels it.
type Status string

const (
	StatusAdded       Status = "added"
	StatusDeleted     Status = "deleted"
	StatusRenamed     Status = "renamed" // possibly also modified and mode-changed
	StatusModeChanged Status = "modeChanged"
	StatusModified    Status = "modified"
	StatusUnchanged   Status = "unchanged"
)

// Op tags one line of a hunk.
type Op string

const (
	OpContext Op = "context"
	OpAdd     Op = "add"
	OpDelete  Op = "delete"
)

// EOL is the line terminator a line ends with; the bytes are kept exactly.
type EOL string

const (
	EOLLF   EOL = "lf"   // "\n"
	EOLCRLF EOL = "crlf" // "\r\n"
	EOLNone EOL = "none" // last line without a newline
)

// Git file modes accepted in [Side.Mode].
const (
	ModeRegular    = "100644"
	ModeExecutable = "100755"
	ModeSymlink    = "120000"
)

// Side is one side of a change. An empty Path means the file does not exist
// on that side (the other side is then added or deleted). Paths are
// workspace-relative with forward slashes; absolute paths and ".." are refused.
type Side struct {
	Path    string
	Mode    string // one of the Mode* constants; "" means ModeRegular
	Content []byte
}

// Options bounds the work. The zero value means the defaults below.
type Options struct {
	Context  int           // context lines around changes; 0 → 3, negative → none
	MaxBytes int           // per side; 0 → 16 MiB
	MaxLines int           // per side; 0 → 300 000 (hard cap 500 000)
	MaxRows  int           // unified lines in all hunks; 0 → 100 000
	Timeout  time.Duration // for the line diff of this file; 0 → 1 s
	// NoWords skips the intra-line (word) spans.
	NoWords bool
}

const (
	defaultContext  = 3
	defaultMaxBytes = 16 << 20
	defaultMaxLines = 300_000
	hardMaxLines    = 500_000 // go-diff encodes each distinct line as one rune
	defaultMaxRows  = 100_000
	defaultTimeout  = time.Second
	binarySniffLen  = 8000 // as git: a NUL in the first 8000 bytes means binary
)

func (o Options) withDefaults() Options {
	switch {
	case o.Context == 0:
		o.Context = defaultContext
	case o.Context < 0:
		o.Context = 0
	}
	if o.MaxBytes <= 0 {
		o.MaxBytes = defaultMaxBytes
	}
	if o.MaxLines <= 0 {
		o.MaxLines = defaultMaxLines
	}
	o.MaxLines = min(o.MaxLines, hardMaxLines)
	if o.MaxRows <= 0 {
		o.MaxRows = defaultMaxRows
	}
	if o.Timeout <= 0 {
		o.Timeout = defaultTimeout
	}
	return o
}

// FileDiff is the JSON-ready result for one file. Hunks is the unified model
// (see [SideBySide] for the split model). It round-trips through JSON without
// losing a byte, so a proposal stored as JSON can still be applied.
type FileDiff struct {
	Status Status   `json:"status"`
	Old    FileInfo `json:"old"`
	New    FileInfo `json:"new"`
	Hunks  []Hunk   `json:"hunks"`
	Stats  Stats    `json:"stats"`
	// Binary is set when either side is binary; Hunks is then empty.
	Binary *BinaryInfo `json:"binary,omitempty"`
	// Omitted is set when the content diff was not computed or not kept.
	Omitted *Omitted `json:"omitted,omitempty"`
	// Degraded is set when the hunks are correct but may not be minimal.
	Degraded *Degraded `json:"degraded,omitempty"`
}

// FileInfo describes one side. Exists is false for the missing side of an
// added or deleted file. SHA256 is the hex digest of the exact bytes; after
// [Select] the new side's Size and SHA256 are unknown and left empty.
type FileInfo struct {
	Path   string `json:"path,omitempty"`
	Mode   string `json:"mode,omitempty"`
	Exists bool   `json:"exists"`
	Size   int    `json:"size"`
	SHA256 string `json:"sha256,omitempty"`
	Lines  int    `json:"lines"`
}

// Stats counts changed lines.
type Stats struct {
	Added   int `json:"added"`
	Deleted int `json:"deleted"`
}

// BinaryInfo says why the file is shown as binary; sizes and hashes are in
// [FileDiff.Old] and [FileDiff.New].
type BinaryInfo struct {
	Reason string `json:"reason"`
}

// Omitted is the explicit marker for a content diff that is not shown.
type Omitted struct {
	Reason OmitReason `json:"reason"`
	Detail string     `json:"detail"`
}

// OmitReason is a stable code for [Omitted].
type OmitReason string

const (
	OmitTooManyBytes OmitReason = "too_many_bytes"
	OmitTooManyLines OmitReason = "too_many_lines"
	OmitDiffTooLarge OmitReason = "diff_too_large"
)

// Degraded says the line diff fell back somewhere to "delete these lines,
// insert those" instead of a finer alignment.
type Degraded struct {
	Reason string `json:"reason"`
	// Regions is how many regions fell back.
	Regions int `json:"regions"`
}

// Hunk is one unified hunk. Starts and counts are exactly what the "@@"
// header shows (a count of 0 makes the start the line before the hunk).
type Hunk struct {
	OldStart int    `json:"oldStart"`
	OldLines int    `json:"oldLines"`
	NewStart int    `json:"newStart"`
	NewLines int    `json:"newLines"`
	Lines    []Line `json:"lines"`
}

// Line is one row of the unified model. Old and New are 1-based line numbers,
// 0 on the side where the line does not exist.
//
// Text is the line without its terminator. When the line is not valid UTF-8,
// Text shows invalid bytes as U+FFFD and Raw carries the exact bytes
// (base64 in JSON); the exact line is Raw (or Text when Raw is nil) followed
// by the bytes EOL names.
type Line struct {
	Op    Op     `json:"op"`
	Old   int    `json:"old,omitempty"`
	New   int    `json:"new,omitempty"`
	Text  string `json:"text"`
	Raw   []byte `json:"raw,omitempty"`
	EOL   EOL    `json:"eol"`
	Spans []Span `json:"spans,omitempty"`
}

// Span marks a changed part of Text in a modified line pair. Offsets count
// UTF-16 code units (JavaScript string indexes), end exclusive.
type Span struct {
	Start int `json:"start"`
	End   int `json:"end"`
}

// IsText reports whether the diff carries hunks that can be rendered as a
// text patch and applied.
func (fd FileDiff) IsText() bool { return fd.Binary == nil && fd.Omitted == nil }
