import { describe, expect, it } from 'vitest';
import type { AuditEntry } from '../api';
import { ApiError } from '../api';
import { createMemoryApi } from '../api/memory';
import { AuditState, distinct, filterEntries, NO_FILTERS, PAGE } from './audit.svelte';

function entry(seq: number, over: Partial<AuditEntry> = {}): AuditEntry {
  return {
    seq,
    at: `2026-01-01T10:${String(seq).padStart(2, '0')}:00.000Z`,
    actor: 'engine',
    surface: 'engine',
    kind: 'run.transition',
    data: {},
    prevHash: `h${seq - 1}`,
    hash: `h${seq}`,
    ...over,
  };
}

const chain: AuditEntry[] = [
  entry(1, { actor: 'ada', surface: 'window', kind: 'workspace.added', data: { workspaceId: 'ws_a', name: 'a' } }),
  entry(2, { actor: 'ada', surface: 'window', kind: 'workspace.added', data: { workspaceId: 'ws_b', name: 'b' } }),
  entry(3, { actor: 'ada', surface: 'browser', kind: 'run.created', runId: 'run_a', data: { workspaceId: 'ws_a' } }),
  entry(4, { kind: 'approval.requested', runId: 'run_a' }),
  entry(5, { actor: 'ada', surface: 'browser', kind: 'approval.resolved', runId: 'run_a' }),
  entry(6, { kind: 'patch.applied', runId: 'run_a' }),
  entry(7, { kind: 'run.transition', runId: 'run_b' }),
];
const runWorkspace = (id: string) => ({ run_a: 'ws_a', run_b: 'ws_b' })[id];
const seqs = (es: AuditEntry[]) => es.map((e) => e.seq);

describe('filterEntries', () => {
  const cases: [string, Partial<typeof NO_FILTERS>, number[]][] = [
    ['no filter: every entry, newest first', {}, [7, 6, 5, 4, 3, 2, 1]],
    ['a run', { runId: 'run_a' }, [6, 5, 4, 3]],
    ['an actor', { actor: 'ada' }, [5, 3, 2, 1]],
    ['an action', { kind: 'workspace.added' }, [2, 1]],
    ['a workspace: its own entries and its runs’', { workspaceId: 'ws_b' }, [7, 2]],
    ['workspace and action together', { workspaceId: 'ws_a', kind: 'approval.resolved' }, [5]],
    ['nothing matches', { runId: 'run_a', actor: 'nobody' }, []],
  ];
  for (const [name, f, want] of cases) {
    it(name, () => expect(seqs(filterEntries(chain, { ...NO_FILTERS, ...f }, runWorkspace))).toEqual(want));
  }

  it('time bounds are inclusive, in local time, and a bound without seconds covers its minute', () => {
    const local = (iso: string) => {
      // The datetime-local value that names the same instant as iso.
      const d = new Date(iso);
      const p = (n: number) => String(n).padStart(2, '0');
      return `${d.getFullYear()}-${p(d.getMonth() + 1)}-${p(d.getDate())}T${p(d.getHours())}:${p(d.getMinutes())}`;
    };
    const f = { ...NO_FILTERS, from: local('2026-01-01T10:03:00.000Z'), to: local('2026-01-01T10:05:00.000Z') };
    expect(seqs(filterEntries(chain, f, runWorkspace))).toEqual([5, 4, 3]);
    expect(seqs(filterEntries(chain, { ...NO_FILTERS, to: f.from }, runWorkspace))).toEqual([3, 2, 1]);
  });

  it('distinct offers each value once, sorted', () => {
    expect(distinct(chain, (e) => e.actor)).toEqual(['ada', 'engine']);
    expect(distinct(chain, (e) => e.runId)).toEqual(['run_a', 'run_b']);
  });
});

describe('AuditState', () => {
  it('loads the chain, verifies it and flags entries from the broken link on', async () => {
    const api = createMemoryApi({ audit: chain, auditVerify: { ok: false, brokenSeq: 5, head: 'h7' } });
    const s = new AuditState(api, { runId: 'run_a' });
    await s.load();
    expect(s.status).toBe('ready');
    expect(s.entries).toHaveLength(7);
    expect(s.filters.runId).toBe('run_a');
    expect(s.verify).toEqual({ ok: false, brokenSeq: 5, head: 'h7' });
    expect(chain.filter((e) => s.broken(e)).map((e) => e.seq)).toEqual([5, 6, 7]);
  });

  it('keeps a load error and does not verify', async () => {
    const api = createMemoryApi({ audit: chain });
    api.fail('audit.list', new ApiError({ code: 'not_ready', message: 'still opening' }));
    const s = new AuditState(api);
    await s.load();
    expect(s.status).toBe('error');
    expect(s.error?.code).toBe('not_ready');
    expect(api.calls.map((c) => c.method)).not.toContain('audit.verify');
  });

  it('exports, and reports an export error apart from the list', async () => {
    const api = createMemoryApi({ audit: chain });
    const s = new AuditState(api);
    await s.load();
    await s.export();
    expect(s.exported).toMatchObject({ saved: true, entries: 7, verified: true, head: 'h7' });
    api.fail('audit.export', new ApiError({ code: 'invalid_input', message: 'cannot write there' }));
    await s.export();
    expect(s.exported).toBeNull();
    expect(s.exportError?.code).toBe('invalid_input');
    expect(s.status).toBe('ready');
  });

  it('a filter change starts the paging again', async () => {
    const s = new AuditState(createMemoryApi({ audit: chain }));
    s.showMore();
    expect(s.shown).toBe(2 * PAGE);
    s.setFilter('actor', 'ada');
    expect(s.shown).toBe(PAGE);
    s.clearFilters();
    expect(s.filters).toEqual(NO_FILTERS);
  });
});
