// The artifacts of runs (issue 18): documents, images, screenshots, HTML and
// file previews, PDFs. Go: backend/artifact.go, app/api/artifacts.go
// (docs/ARTIFACTS.md, docs/API.md#artifacts). An artifact never means a
// change was accepted; it is something to look at.

export type ArtifactKind = 'document' | 'image' | 'screenshot' | 'html' | 'pdf' | 'file';

export const ARTIFACT_KINDS: readonly ArtifactKind[] = ['document', 'image', 'screenshot', 'html', 'pdf', 'file'];

/** The contract's metadata; which fields are set depends on the kind. */
export interface ArtifactMeta {
  readAt?: string;
  language?: string;
  buildStatus?: string;
  viewport?: string;
  route?: string;
  theme?: string;
  /** A screenshot's privacy review: pending until the user has seen it. */
  privacy?: 'pending' | 'approved';
  width?: number;
  height?: number;
  /** Secrets were replaced before it was stored. */
  redacted?: boolean;
}

export interface Artifact {
  artifactId: string;
  runId: string;
  workspaceId: string;
  kind: ArtifactKind;
  title: string;
  /** Workspace-relative source path. */
  path?: string;
  mediaType: string;
  sha256: string;
  size: number;
  producer: string;
  callId?: string;
  meta: ArtifactMeta;
  /** The sequence of the run.artifact.ready / run.preview.ready event. */
  sequence?: number;
  createdAt: string;
}

export interface ArtifactQuery {
  runId?: string;
  workspaceId?: string;
  kind?: ArtifactKind;
  /** A date or timestamp; to is exclusive. */
  from?: string;
  to?: string;
  limit?: number;
}

/**
 * An artifact as the viewer shows it: text (document, file, HTML source), a
 * data: URL (image, screenshot, PDF), and for HTML the preview document
 * (no script, no URL, a strict CSP first) for a sandboxed frame.
 */
export interface ArtifactView {
  artifact: Artifact;
  text?: string;
  dataUrl?: string;
  preview?: string;
}

export interface ArtifactsAPI {
  /** Newest first; rejects with invalid_input for an unknown kind. */
  list(q: ArtifactQuery): Promise<Artifact[]>;
  get(id: string): Promise<ArtifactView>;
  /** Marks a screenshot as seen by the user (its privacy review); audited. Only then can it be downloaded or exported. */
  review(id: string): Promise<Artifact>;
}
