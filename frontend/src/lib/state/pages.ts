// The settings and audit pages, addressed by the location hash next to the
// review views (review.svelte.ts): #/settings, #/audit and #/audit/run/<id>
// for one run's entries. Anything else is a review view.

import { hashParts } from './view';

export type Page = { name: 'settings' } | { name: 'audit'; runId?: string };

export function parsePage(hash: string): Page | null {
  const parts = hashParts(hash);
  if (parts[0] === 'settings') return { name: 'settings' };
  if (parts[0] === 'audit') return parts[1] === 'run' && parts[2] ? { name: 'audit', runId: parts[2] } : { name: 'audit' };
  return null;
}

export function pageHash(p: Page): string {
  if (p.name === 'settings') return '#/settings';
  return p.runId ? `#/audit/run/${encodeURIComponent(p.runId)}` : '#/audit';
}
