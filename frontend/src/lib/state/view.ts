// The review views and their addresses (#/run/<id>, #/new, #/inbox, home).
// Plain TypeScript without runes: main.ts reads the address with it before
// the app's chunk has loaded.
export type View = { name: 'home' } | { name: 'new'; workspaceId?: string } | { name: 'inbox' } | { name: 'run'; runId: string };

/**
 * Reads a view from a location hash: #/run/<id>, #/new, #/inbox, else home.
 * Never throws: the address is user input (a pasted or hand-edited link), and
 * main.ts reads it before anything can show an error, so a segment that is
 * not valid percent-encoding is taken as written (a run of that id is then
 * simply not found) and anything unknown is home.
 */
export function parseHash(hash: string): View {
  const parts = hashParts(hash);
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

/** The hash's path segments, each decoded where it is valid percent-encoding. */
export function hashParts(hash: string): string[] {
  return String(hash ?? '')
    .replace(/^#\/?/, '')
    .split('/')
    .filter(Boolean)
    .map(safeDecode);
}

/** decodeURIComponent, or the text as written when it is malformed (`%E0%A4%A`). */
export function safeDecode(s: string): string {
  try {
    return decodeURIComponent(s);
  } catch {
    return s;
  }
}
