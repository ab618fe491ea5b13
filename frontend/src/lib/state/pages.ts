// The settings, audit and artifacts pages, addressed by the location hash
// next to the review views (review.svelte.ts): #/settings, #/audit and
// #/audit/run/<id> for one run's entries, #/artifacts and
// #/artifacts/run/<id> for one run's artifacts. Anything else is a review
// view.

import { hashParts } from './view';

export type Page = { name: 'settings' } | { name: 'audit'; runId?: string } | { name: 'artifacts'; runId?: string };

export function parsePage(hash: string): Page | null {
  const parts = hashParts(hash);
  if (parts[0] === 'settings') return { name: 'settings' };
  if (parts[0] === 'audit' || parts[0] === 'artifacts') {
    const name = parts[0];
    return parts[1] === 'run' && parts[2] ? { name, runId: parts[2] } : { name };
  }
  return null;
}

export function pageHash(p: Page): string {
  if (p.name === 'settings') return '#/settings';
  return p.runId ? `#/${p.name}/run/${encodeURIComponent(p.runId)}` : `#/${p.name}`;
}
