// The audit export follows the view's filters (issue 19): exportFilter turns
// them into the export's filter, times in UTC with the list's bounds (a
// minute without seconds is covered whole, the upper bound exclusive), and
// the memory api's export says it was filtered and of how many.
import { describe, expect, it } from 'vitest';
import { exportFilter, NO_FILTERS } from './audit.svelte';
import { createMemoryApi } from '../api/memory';

describe('exportFilter', () => {
  it('is undefined without a filter', () => {
    expect(exportFilter(NO_FILTERS)).toBeUndefined();
  });

  it('keeps every active filter and makes the minute bounds exact', () => {
    const from = '2026-11-25T08:00';
    const to = '2026-11-25T08:30';
    const f = exportFilter({ ...NO_FILTERS, runId: 'run_1', kind: 'approval.resolved', workspaceId: 'ws_1', from, to });
    expect(f).toEqual({
      runId: 'run_1',
      kind: 'approval.resolved',
      workspaceId: 'ws_1',
      from: new Date(from).toISOString(),
      to: new Date(new Date(to).getTime() + 60_000).toISOString(),
    });
  });

  it('the export says it was filtered, of how many', async () => {
    const entry = (seq: number, kind: string) => ({
      seq,
      at: `2026-11-25T08:0${seq}:00.000Z`,
      actor: 'me',
      surface: 'cli' as const,
      kind,
      data: {},
      prevHash: '',
      hash: `h${seq}`,
    });
    const api = createMemoryApi({ audit: [entry(1, 'run.created'), entry(2, 'approval.resolved'), entry(3, 'run.created')] });
    expect(await api.audit.export(exportFilter({ ...NO_FILTERS, kind: 'run.created' }))).toMatchObject({
      entries: 2,
      filtered: true,
      total: 3,
    });
    expect(await api.audit.export()).not.toHaveProperty('filtered');
  });
});
