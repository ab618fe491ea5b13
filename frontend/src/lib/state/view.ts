// The review views and their addresses (#/run/<id>, #/new, #/inbox, home).
// Plain TypeScript without runes: main.ts reads the address with it before
// the app's chunk has loaded.
export type View = { name: 'home' } | { name: 'new'; workspaceId?: string } | { name: 'inbox' } | { name: 'run'; runId: string };

/** Reads a view from a location hash: #/run/<id>, #/new, #/inbox, else home. */
export function parseHash(hash: string): View {
  const parts = hash.replace(/^#\/?/, '').split('/').filter(Boolean).map(decodeURIComponent);
  if (parts[0] === 'run' && parts[1]) return { name: 'run', runId: parts[1] };
  if (parts[0] === 'new') return parts[1] ? { name: 'new', workspaceId: parts[1] } : { name: 'new' };
  if (parts[0] === 'inbox') return { name: 'inbox' };
  return { name: 'home' };
}

export function viewHash(v: View): string {
  switch (v.name) {
    case 'run':
      return `#/run/${encodeURIComponent(v.runId)}`;
    case 'new':
      return v.workspaceId ? `#/new/${encodeURIComponent(v.workspaceId)}` : '#/new';
    case 'inbox':
      return '#/inbox';
  }
  return '#/';
}
