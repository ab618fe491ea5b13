// The workspace conflict notice (issue 15): two buttons, each asking for a
// confirmation before it calls the API; once a run.workspace.conflict_resolved
// event exists the row says how it was resolved and offers nothing.
import { fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import { describe, expect, it } from 'vitest';
import NoticeRow from './NoticeRow.svelte';
import { API_CONTEXT_KEY, ApiError, type ConflictChoice, type ConflictsAPI, type RunEvent } from '../../lib/api';
import { createMemoryApi } from '../../lib/api/memory';
import { applyEvents, createTimeline, type NoticeItem } from '../../lib/timeline/model';

function ev(sequence: number, type: string, payload: unknown): RunEvent {
  return { schemaVersion: 1, id: `e${sequence}`, sequence, type, runId: 'run_1', sessionId: 's', agentId: 'a', timestamp: '2026-01-01T00:00:00.000Z', payload };
}

const conflict = ev(1, 'run.workspace.conflict', {
  code: 'workspace_conflict', intentId: 'ck_1', checkpointId: 'ck_1',
  files: [{ path: 'a.go', before: 'h1', after: 'h2', found: 'h3' }], message: 'm', next: 'Review the files.',
});

function row(events: RunEvent[]): NoticeItem {
  const t = createTimeline();
  applyEvents(t, events);
  const it = t.items.find((i) => i.kind === 'notice');
  if (it?.kind !== 'notice') throw new Error('no notice row');
  return it;
}

function setup(item: NoticeItem, fail?: ApiError) {
  const calls: [string, string, ConflictChoice][] = [];
  const conflicts: ConflictsAPI = {
    resolve: async (runId, intentId, choice) => {
      calls.push([runId, intentId, choice]);
      if (fail) throw fail;
      return { intentId, choice, files: [], actor: 'me', surface: 'window' };
    },
  };
  const api = { ...createMemoryApi(), conflicts };
  render(NoticeRow, { props: { item }, context: new Map([[API_CONTEXT_KEY, api]]) });
  return calls;
}

describe('conflict notice row', () => {
  for (const [button, choice] of [['conflict-keep', 'keep'], ['conflict-restore', 'restore']] as const) {
    it(`${choice}: confirms before it resolves`, async () => {
      const calls = setup(row([conflict]));
      await fireEvent.click(screen.getByTestId(button));
      expect(calls).toEqual([]); // the first click only asks
      await fireEvent.click(screen.getByTestId('conflict-confirm'));
      await waitFor(() => expect(calls).toEqual([['run_1', 'ck_1', choice]]), { timeout: 30_000 });
      // Resolved at once (a follower may have stopped at the run's end), with no buttons left.
      await waitFor(() => expect(screen.getByTestId('conflict-resolved').textContent).toContain('(me)'), { timeout: 30_000 });
      expect(screen.queryByTestId('conflict-keep')).toBeNull();
    });
  }

  it('cancel asks nothing of the API', async () => {
    const calls = setup(row([conflict]));
    await fireEvent.click(screen.getByTestId('conflict-restore'));
    await fireEvent.click(screen.getByRole('button', { name: 'Cancel' }));
    expect(screen.getByTestId('conflict-keep')).toBeTruthy();
    expect(calls).toEqual([]);
  });

  it('shows a refusal with its next step', async () => {
    const calls = setup(row([conflict]), new ApiError({ code: 'conflict', message: 'nothing was restored: [a.go] changed since the conflict was recorded', next: 'Review those files' }, 409));
    await fireEvent.click(screen.getByTestId('conflict-restore'));
    await fireEvent.click(screen.getByTestId('conflict-confirm'));
    await waitFor(() => expect(screen.getByText(/nothing was restored/)).toBeTruthy(), { timeout: 30_000 });
    expect(calls).toHaveLength(1);
  });

  it('says how it was resolved once the event exists, with no buttons', () => {
    setup(row([conflict, ev(2, 'run.workspace.conflict_resolved', { intentId: 'ck_1', choice: 'restore', files: [], actor: 'alice', surface: 'cli' })]));
    expect(screen.getByTestId('conflict-resolved').textContent).toContain('restored the content before the change (alice)');
    expect(screen.queryByTestId('conflict-keep')).toBeNull();
    expect(screen.queryByTestId('conflict-restore')).toBeNull();
  });

  it('a resolution of another conflict leaves this one open', () => {
    setup(row([conflict, ev(2, 'run.workspace.conflict_resolved', { intentId: 'ck_other', choice: 'keep', files: [], actor: 'alice', surface: 'cli' })]));
    expect(screen.queryByTestId('conflict-resolved')).toBeNull();
    expect(screen.getByTestId('conflict-keep')).toBeTruthy();
  });
});
