package backend

// Artifacts (issue 18): review surfaces a run produces. An artifact never
// means a change was accepted; it is something to look at. Its bytes are a
// content-addressed blob (sha256) in the store, written only after they were
// read through the workspace's rooted access, path-scrubbed and
// secret-scanned; the event that announces it carries the metadata and the
// blob's hash, never the bytes.

// ArtifactKind is what an artifact is, and so how it is shown.
type ArtifactKind string

const (
	// ArtifactFile is a preview of a workspace file as it was when read.
	ArtifactFile ArtifactKind = "file"
	// ArtifactDocument is a generated document (Markdown), rendered safely.
	ArtifactDocument ArtifactKind = "document"
	// ArtifactImage is an image file (PNG, JPEG, GIF, WebP).
	ArtifactImage ArtifactKind = "image"
	// ArtifactScreenshot is an image of a rendered page; it is pending a
	// privacy review until the user has seen it.
	ArtifactScreenshot ArtifactKind = "screenshot"
	// ArtifactHTML is an HTML page, previewed in a sandboxed frame with no
	// scripts and no network.
	ArtifactHTML ArtifactKind = "html"
	// ArtifactPDF is a PDF document.
	ArtifactPDF ArtifactKind = "pdf"
)

// ArtifactKinds lists every kind, in the order the UI offers them.
var ArtifactKinds = []ArtifactKind{ArtifactDocument, ArtifactImage, ArtifactScreenshot, ArtifactHTML, ArtifactPDF,
	ArtifactFile}

// Valid reports whether k is a known kind.
func (k ArtifactKind) Valid() bool {
	for _, x := range ArtifactKinds {
		if k == x {
			return true
		}
	}
	return false
}

// Text reports whether the kind's bytes are text, which is redacted and
// path-scrubbed in place; binary kinds holding a secret are refused.
func (k ArtifactKind) Text() bool {
	return k == ArtifactFile || k == ArtifactDocument || k == ArtifactHTML
}

// Event is the event that announces an artifact of kind k: previews (a file,
// an HTML page) are run.preview.ready, the rest run.artifact.ready.
func (k ArtifactKind) Event() EventType {
	if k == ArtifactFile || k == ArtifactHTML {
		return EvPreviewReady
	}
	return EvArtifactReady
}

// Privacy review states of a screenshot: shown to the user before it is kept
// or shared.
const (
	PrivacyPending  = "pending"
	PrivacyApproved = "approved"
)

// MaxArtifactBytes bounds one artifact's content.
const MaxArtifactBytes = 16 << 20

// Artifact error codes.
const (
	// CodeArtifactTooLarge: the content exceeds MaxArtifactBytes.
	CodeArtifactTooLarge FailureCode = "artifact_too_large"
	// CodeArtifactSecret: binary content (an image, a PDF) holds what looks
	// like a secret; it cannot be redacted without breaking it, so it is not
	// stored.
	CodeArtifactSecret FailureCode = "artifact_secret"
)

// ArtifactMeta is the contract's metadata of an artifact; which fields are
// set depends on the kind.
type ArtifactMeta struct {
	// ReadAt is when a previewed file was read (file, html).
	ReadAt string `json:"readAt,omitempty"`
	// Language of a document or the UI language of a screenshot.
	Language string `json:"language,omitempty"`
	// BuildStatus of a generated document: "built" or "failed".
	BuildStatus string `json:"buildStatus,omitempty"`
	// Viewport ("1280x800"), Route (the page's workspace path or loopback
	// URL) and Theme ("light"/"dark") of a screenshot.
	Viewport string `json:"viewport,omitempty"`
	Route    string `json:"route,omitempty"`
	Theme    string `json:"theme,omitempty"`
	// Privacy is the review state of a screenshot (PrivacyPending first).
	Privacy string `json:"privacy,omitempty"`
	// Width and Height of an image, when known.
	Width  int `json:"width,omitempty"`
	Height int `json:"height,omitempty"`
	// Redacted counts the secrets replaced in a text artifact.
	Redacted bool `json:"redacted,omitempty"`
}

// ArtifactDraft is what a producer hands the store: already read through
// the workspace and path-scrubbed; the store redacts and hashes it.
type ArtifactDraft struct {
	Kind      ArtifactKind
	Title     string
	Path      string // workspace-relative source path; "" when there is none
	MediaType string
	Producer  string // the tool or surface that made it: publish_artifact, screenshot, patch, tour
	CallID    string // the tool call that produced it, if any
	Meta      ArtifactMeta
	Content   []byte
}

// Artifact is a stored artifact's record (and the payload of
// run.artifact.ready / run.preview.ready).
type Artifact struct {
	ID          string       `json:"artifactId"`
	RunID       string       `json:"runId"`
	WorkspaceID string       `json:"workspaceId"`
	Kind        ArtifactKind `json:"kind"`
	Title       string       `json:"title"`
	Path        string       `json:"path,omitempty"`
	MediaType   string       `json:"mediaType"`
	SHA256      string       `json:"sha256"`
	Size        int64        `json:"size"`
	Producer    string       `json:"producer"`
	CallID      string       `json:"callId,omitempty"`
	Meta        ArtifactMeta `json:"meta"`
	Sequence    int64        `json:"sequence,omitempty"` // the announcing event's sequence
	CreatedAt   string       `json:"createdAt"`
}

// ArtifactSink stores an artifact of the calling run and announces it; the
// engine sets it on ToolEnv.
type ArtifactSink func(d ArtifactDraft) (Artifact, error)

func init() {
	Recovery[CodeArtifactTooLarge] = "Publish a smaller file (at most 16 MiB), or split it."
	Recovery[CodeArtifactSecret] = "Remove the secret from the file, or publish a text version that can be redacted."
}
