// Localised names of the artifact kinds.
import type { ArtifactKind } from '../../lib/api';
import { m } from '../../lib/i18n';

const NAMES: Record<ArtifactKind, () => string> = {
  document: m.artifacts_kind_document,
  image: m.artifacts_kind_image,
  screenshot: m.artifacts_kind_screenshot,
  html: m.artifacts_kind_html,
  pdf: m.artifacts_kind_pdf,
  file: m.artifacts_kind_file,
};

export function kindName(k: string): string {
  return (NAMES as Record<string, () => string>)[k]?.() ?? k;
}

const BADGES: Record<ArtifactKind, string> = { document: 'MD', image: 'IMG', screenshot: 'SHOT', html: 'HTML', pdf: 'PDF', file: 'TXT' };

/** A short badge standing for the kind where there is no thumbnail. */
export function kindBadge(k: string): string {
  return (BADGES as Record<string, string>)[k] ?? k.slice(0, 4).toUpperCase();
}
