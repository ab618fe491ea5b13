// The runs list over a history facade that pages like GET /api/runs/page:
// newest first, "Show more" asks for the page before the last run's cursor,
// a filter starts again from the first page, resume links open the other
// run, and an imported run is marked.
import { fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import { describe, expect, it, vi } from 'vitest';
import RunsList from './RunsList.svelte';
import { API_CONTEXT_KEY, type HistoryAPI, type RunListItem, type RunsPageRequest } from '../../lib/api';
import { createMemoryApi } from '../../lib/api/memory';

const item = (i: number): RunListItem => ({
  id: `run_${String(i).padStart(6, '0')}`,
  task: 'same task',
  state: 'Completed',
  workspaceId: 'ws_1',
  workspaceName: 'proj',
  profile: 'demo',
  createdAt: '2026-11-25T06:00:00.000Z',
  lastEventAt: '2026-11-25T06:00:00.000Z',
  pendingApprovals: 0,
  cursor: i + 1,
  ...(i === 3 ? { resumedBy: 'run_000004' } : {}),
  ...(i === 4 ? { resumedFrom: 'run_000003', imported: true } : {}),
});

describe('RunsList', () => {
  it('pages, filters, links resumed runs both ways and marks imports', async () => {
    const asked: RunsPageRequest[] = [];
    const all = Array.from({ length: 150 }, (_, k) => item(149 - k)); // newest first
    const history: HistoryAPI = {
      search: async () => [],
      exportRun: async () => ({ saved: false, events: 0 }),
      runsPage: async (req) => {
        asked.push(req);
        const from = req.before ? all.findIndex((r) => r.cursor < req.before!) : 0;
        const runs = all.slice(from, from + (req.limit ?? 100));
        return { runs, more: from + runs.length < all.length };
      },
    };
    const onOpen = vi.fn();
    render(RunsList, {
      props: { workspaces: [{ id: 'ws_1', name: 'proj', displayPath: '~/proj', addedAt: '' }], onOpen },
      context: new Map([[API_CONTEXT_KEY, { ...createMemoryApi(), history }]]),
    });
    await waitFor(() => expect(screen.getAllByTestId('runs-list-row')).toHaveLength(100), { timeout: 30_000 });
    expect(screen.getAllByTestId('runs-list-row')[0]).toHaveTextContent('run_000149'.slice(-6));
    await fireEvent.click(screen.getByTestId('runs-list-more'));
    await waitFor(() => expect(screen.getAllByTestId('runs-list-row')).toHaveLength(150), { timeout: 30_000 });
    expect(asked[1]).toMatchObject({ before: all[99]!.cursor });
    expect(screen.queryByTestId('runs-list-more')).toBeNull();
    await fireEvent.click(screen.getByTestId('runs-list-resumed-by'));
    expect(onOpen).toHaveBeenCalledWith('run_000004');
    await fireEvent.click(screen.getByTestId('runs-list-resumed-from'));
    expect(onOpen).toHaveBeenCalledWith('run_000003');
    expect(screen.getAllByTestId('runs-list-imported')).toHaveLength(1);
    await fireEvent.change(screen.getByTestId('runs-list-status'), { target: { value: 'Failed' } });
    await waitFor(() => expect(asked.at(-1)).toMatchObject({ status: ['Failed'], before: undefined }));
  });
});
