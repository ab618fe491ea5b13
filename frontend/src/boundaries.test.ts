// @vitest-environment node
// The dependency rules of style.md §2 for the frontend: components and state
// never touch a transport (fetch, EventSource, window.go, wailsjs) and reach
// the api module only through its index; component domains import only
// lib/**, components/shared and themselves.
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const SRC = dirname(fileURLToPath(import.meta.url));

const TRANSPORT = [
  { re: /\bfetch\s*\(/, why: 'calls fetch directly' },
  { re: /\bEventSource\b/, why: 'uses EventSource directly' },
  { re: /\bXMLHttpRequest\b|\bWebSocket\b/, why: 'opens a network transport' },
  { re: /\bwindow\s*\.\s*(go|runtime)\b|\bwailsbindings\b/, why: 'touches the Wails bridge' },
  { re: /wailsjs/, why: 'imports generated Wails bindings' },
];

const IMPORT = /(?:import|export)[^'"]*?from\s*['"]([^'"]+)['"]|import\s*\(\s*['"]([^'"]+)['"]\s*\)|import\s+['"]([^'"]+)['"]/g;

/** Violations in one file's source, given its path relative to src/. */
export function violations(file: string, source: string): string[] {
  const out: string[] = [];
  const isTest = /\.test\.ts$/.test(file);
  const inApi = file.startsWith(`lib${sep}api${sep}`) || file.startsWith('lib/api/');
  const norm = file.split(sep).join('/');
  if (!inApi && !isTest) {
    const code = source.replace(/\/\/.*$/gm, '').replace(/<!--[\s\S]*?-->/g, '');
    for (const t of TRANSPORT) if (t.re.test(code)) out.push(`${norm} ${t.why}`);
  }
  for (const m of source.matchAll(IMPORT)) {
    const spec = m[1] ?? m[2] ?? m[3] ?? '';
    if (!spec.startsWith('.')) continue;
    const target = relative(SRC, resolve(SRC, dirname(file), spec)).split(sep).join('/');
    if (!inApi && target.startsWith('lib/api/') && !(isTest && target === 'lib/api/memory')) {
      out.push(`${norm} imports ${target}: go through lib/api (the index)`);
    }
    const domain = /^components\/([^/]+)\//.exec(norm)?.[1];
    const targetDomain = /^components\/([^/]+)\//.exec(target)?.[1];
    if (domain && targetDomain && targetDomain !== domain && targetDomain !== 'shared') {
      out.push(`${norm} imports components/${targetDomain}: a domain imports only lib/**, shared and itself`);
    }
    if (domain === 'shared' && targetDomain && targetDomain !== 'shared') {
      out.push(`${norm} imports components/${targetDomain}: shared imports no other domain`);
    }
  }
  return out;
}

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    if (e.isDirectory()) return e.name === 'paraglide' ? [] : walk(p);
    return /\.(ts|svelte)$/.test(e.name) ? [p] : [];
  });
}

describe('frontend import boundaries', () => {
  it('the checker catches each kind of violation', () => {
    const bad: [string, string][] = [
      ['components/runs/RunList.svelte', "<script>const r = await fetch('/api/runs');</script>"],
      ['components/runs/Live.svelte', '<script>new EventSource("/api/stream")</script>'],
      ['components/runs/Win.svelte', '<script>window.go.api.RunsAPI.List()</script>'],
      ['components/runs/Gen.svelte', "<script>import { List } from '../../../wailsjs/go/api/RunsAPI';</script>"],
      ['components/runs/Http.svelte', "<script>import { createHttpApi } from '../../lib/api/http';</script>"],
      ['lib/state/runs.svelte.ts', "import { createWailsApi } from '../api/wails';"],
      ['components/runs/X.svelte', "<script>import A from '../audit/AuditView.svelte';</script>"],
      ['components/shared/Y.svelte', "<script>import R from '../runs/RunRow.svelte';</script>"],
    ];
    for (const [file, src] of bad) expect(violations(file, src), file).not.toEqual([]);
    expect(violations('components/runs/Ok.svelte', "<script>import { useApi } from '../../lib/api';</script>")).toEqual([]);
  });

  it('no file outside lib/api touches a transport or reaches past the api index', () => {
    const found = walk(SRC)
      .filter((f) => !f.endsWith('boundaries.test.ts'))
      .flatMap((f) => violations(relative(SRC, f), readFileSync(f, 'utf8')));
    expect(found).toEqual([]);
  });
});
