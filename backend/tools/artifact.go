package tools

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"image"
	_ "image/gif" // image.DecodeConfig reads the dimensions of GIF artifacts
	_ "image/jpeg"
	_ "image/png"
	"path"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/jsonschema-go/jsonschema"

	"agenthub/backend"
	"agenthub/backend/agentpath"
	"agenthub/workspace"
)

// PublishArtifact is the tool that turns a workspace file into an artifact.
const PublishArtifact = "publish_artifact"

type publishArgs struct {
	Path     string `json:"path" jsonschema:"workspace-relative path of the file to publish, e.g. docs/report.md"`
	Title    string `json:"title,omitempty" jsonschema:"a short title for the reviewer; default the file's path"`
	Kind     string `json:"kind,omitempty" jsonschema:"document, image, html, pdf or file (a text preview); default from the file's extension"`
	Language string `json:"language,omitempty" jsonschema:"the language of a document, e.g. en or zh-CN"`
}

var publishSchema = lazySchema[publishArgs](func(s *jsonschema.Schema) {
	prop(s, "path").MinLength = jsonschema.Ptr(1)
	prop(s, "title").MaxLength = jsonschema.Ptr(200)
	prop(s, "kind").Enum = []any{"document", "image", "html", "pdf", "file"}
	prop(s, "language").MaxLength = jsonschema.Ptr(35)
})

const publishDescription = `Publish a file of the workspace as an artifact the user can review next to the ` +
	`run: a Markdown document (rendered), an image (PNG, JPEG, GIF, WebP), an HTML page (previewed without ` +
	`scripts or network), a PDF, or any text file as a preview. The file is copied as it is now (at most 16 MiB); ` +
	`secrets in text are redacted, and an image or PDF holding a secret is refused. Publishing never means ` +
	`a change was accepted. The result names the artifact's id.`

// publishArtifact copies a workspace file into the store as an artifact.
// It reads like read_file (no approval; secret files are denied by the
// gate) and writes nothing to the workspace.
type publishArtifact struct{}

func (publishArtifact) Spec() backend.ToolSpec {
	return backend.ToolSpec{Name: PublishArtifact, Description: publishDescription, Schema: publishSchema.Raw()}
}

func (publishArtifact) Action(_ context.Context, env backend.ToolEnv, raw json.RawMessage) (*backend.GatedAction, error) {
	a, err := decode[publishArgs](PublishArtifact, publishSchema, raw)
	if err != nil {
		return nil, nil
	}
	w, err := openWorkspace(env)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", PublishArtifact, err)
	}
	defer w.Close()
	p, err := w.Resolve(a.Path)
	if err != nil {
		return nil, nil
	}
	if ok, pat := agentpath.Secret(env.WorkspaceRoot, p); ok {
		return secretAction(PublishArtifact, "published", p, pat), nil
	}
	return nil, nil
}

func (publishArtifact) Execute(_ context.Context, env backend.ToolEnv, in backend.ToolInput) (backend.ToolResult, error) {
	a, err := decode[publishArgs](PublishArtifact, publishSchema, in.Arguments)
	if err != nil {
		return failure(env, "%v", err), nil
	}
	if env.Artifacts == nil {
		return failure(env, "%s: this run keeps no artifacts", PublishArtifact), nil
	}
	d, err := ReadArtifact(env, a.Path, backend.ArtifactKind(a.Kind))
	if err != nil {
		return failure(env, "%s: %v", PublishArtifact, err), nil
	}
	d.Title, d.Producer, d.CallID = strings.TrimSpace(a.Title), PublishArtifact, in.CallID
	if d.Kind == backend.ArtifactDocument {
		d.Meta.Language, d.Meta.BuildStatus = a.Language, "built"
	}
	art, err := env.Artifacts(d)
	if err != nil {
		return failure(env, "%s: %s", PublishArtifact, artifactMessage(err)), nil
	}
	note := ""
	if art.Meta.Redacted {
		note = "; secrets in it were redacted"
	}
	return success(env, fmt.Sprintf("published %s %s as artifact %s (%d bytes, sha256 %s)%s\n",
		art.Kind, d.Path, art.ID, art.Size, art.SHA256[:12], note)), nil
}

// artifactMessage is a store refusal as the model reads it: code first.
func artifactMessage(err error) string {
	var be *backend.Error
	if errors.As(err, &be) {
		return string(be.Code) + ": " + be.Message
	}
	return err.Error()
}

// ReadArtifact reads a workspace file for an artifact through the rooted
// workspace access (no symlink or hard link out, no FIFO, socket or device,
// no absolute or /proc path, at most backend.MaxArtifactBytes) and checks
// that its bytes are what the kind says. kind "" is chosen from the
// extension. Text is path-scrubbed; the store redacts it. Secret files are
// refused here too, whatever the gate said.
func ReadArtifact(env backend.ToolEnv, rel string, kind backend.ArtifactKind) (backend.ArtifactDraft, error) {
	w, err := openWorkspace(env)
	if err != nil {
		return backend.ArtifactDraft{}, err
	}
	defer w.Close()
	p, err := w.Resolve(rel)
	if err != nil {
		return backend.ArtifactDraft{}, errors.New(pathMessage(err))
	}
	if ok, pat := agentpath.Secret(env.WorkspaceRoot, p); ok {
		return backend.ArtifactDraft{}, fmt.Errorf("refused: %s is a secret file (%s); secrets are never published", p, pat)
	}
	w.MaxRead = backend.MaxArtifactBytes
	data, err := w.ReadFile(p)
	if errors.Is(err, workspace.ErrTooLarge) {
		return backend.ArtifactDraft{}, fmt.Errorf("%s: %s is larger than %d bytes", backend.CodeArtifactTooLarge, p,
			backend.MaxArtifactBytes)
	}
	if err != nil {
		return backend.ArtifactDraft{}, errors.New(pathMessage(err))
	}
	if kind == "" {
		kind = KindOf(p)
	}
	d := backend.ArtifactDraft{Kind: kind, Path: p, Content: data}
	if err := sniff(&d); err != nil {
		return backend.ArtifactDraft{}, err
	}
	if kind.Text() {
		d.Content = []byte(newScrubber(env.WorkspaceRoot).text(string(data)))
		d.Meta.ReadAt = backend.Stamp(time.Now())
	}
	return d, nil
}

// KindOf is the kind a file's extension suggests.
func KindOf(p string) backend.ArtifactKind {
	switch strings.ToLower(path.Ext(p)) {
	case ".md", ".markdown":
		return backend.ArtifactDocument
	case ".png", ".jpg", ".jpeg", ".gif", ".webp":
		return backend.ArtifactImage
	case ".html", ".htm":
		return backend.ArtifactHTML
	case ".pdf":
		return backend.ArtifactPDF
	}
	return backend.ArtifactFile
}

// sniff sets the media type from the bytes and refuses content that is not
// what its kind claims (a PNG named .md, an executable named .png): the
// viewer trusts the kind to pick how it renders.
func sniff(d *backend.ArtifactDraft) error {
	c := d.Content
	switch d.Kind {
	case backend.ArtifactImage, backend.ArtifactScreenshot:
		mt := imageType(c)
		if mt == "" {
			return fmt.Errorf("%s is not a PNG, JPEG, GIF or WebP image", d.Path)
		}
		d.MediaType = mt
		if cfg, _, err := image.DecodeConfig(bytes.NewReader(c)); err == nil {
			d.Meta.Width, d.Meta.Height = cfg.Width, cfg.Height
		}
		if d.Kind == backend.ArtifactScreenshot && d.Meta.Privacy == "" {
			d.Meta.Privacy = backend.PrivacyPending
		}
	case backend.ArtifactPDF:
		if !bytes.HasPrefix(c, []byte("%PDF-")) {
			return fmt.Errorf("%s is not a PDF (it does not start with %%PDF-)", d.Path)
		}
		d.MediaType = "application/pdf"
	default:
		if bytes.IndexByte(c, 0) >= 0 || !utf8.Valid(c) {
			return fmt.Errorf("%s is binary; only UTF-8 text can be a %s artifact", d.Path, d.Kind)
		}
		switch d.Kind {
		case backend.ArtifactDocument:
			d.MediaType = "text/markdown; charset=utf-8"
		case backend.ArtifactHTML:
			d.MediaType = "text/html; charset=utf-8"
		default:
			d.MediaType = "text/plain; charset=utf-8"
		}
	}
	return nil
}

// imageType is the media type of an image by its magic bytes, "" if none.
func imageType(c []byte) string {
	switch {
	case bytes.HasPrefix(c, []byte("\x89PNG\r\n\x1a\n")):
		return "image/png"
	case bytes.HasPrefix(c, []byte("\xff\xd8\xff")):
		return "image/jpeg"
	case bytes.HasPrefix(c, []byte("GIF87a")), bytes.HasPrefix(c, []byte("GIF89a")):
		return "image/gif"
	case len(c) >= 12 && string(c[:4]) == "RIFF" && string(c[8:12]) == "WEBP":
		return "image/webp"
	}
	return ""
}

// PublishCreated is publishCreated for the adapters that apply an agent
// CLI's approved writes themselves (ACP): what they create counts the same.
func PublishCreated(env backend.ToolEnv, rel, tool string) string {
	return publishCreated(env, rel, tool)
}

// publishCreated makes a document or an image an approved patch created an
// artifact of the run (issue 18), and says so in the result; anything else,
// a run without an artifact store, or a file that cannot be published (too
// large, a secret in an image) adds nothing: the write itself succeeded.
func publishCreated(env backend.ToolEnv, rel, tool string) string {
	if env.Artifacts == nil {
		return ""
	}
	kind := KindOf(rel)
	if kind != backend.ArtifactDocument && kind != backend.ArtifactImage {
		return ""
	}
	d, err := ReadArtifact(env, rel, kind)
	if err != nil {
		return ""
	}
	d.Producer = tool
	if kind == backend.ArtifactDocument {
		d.Meta.BuildStatus = "built"
	}
	a, err := env.Artifacts(d)
	if err != nil {
		return ""
	}
	return fmt.Sprintf("; published as artifact %s", a.ID)
}
