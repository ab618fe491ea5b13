import { describe, expect, it } from 'vitest';
import type { RunEvent, RunSummary } from '../api';
import { createMemoryApi } from '../api/memory';
import { shellRequest } from '../testdata/approvals';
import { parseHash, ReviewState, viewHash } from './review.svelte';
import { TimelineState } from './timeline.svelte';

const run: RunSummary = {
  id: 'run_1',
  sessionId: 'ses_1',
  workspaceId: 'ws_1',
  profile: 'demo',
  task: 'Tour',
  state: 'Running',
  coarse: 'running',
  createdAt: '2026-01-01T00:00:00.000Z',
  lastEventAt: '2026-01-01T00:00:05.000Z',
  lastSequence: 5,
  pendingApprovals: 0,
  scripted: true,
};

function ev(sequence: number, type: string, payload: unknown = {}, runId = 'run_1'): RunEvent {
  return { schemaVersion: 1, id: `e${sequence}`, sequence, type, runId, sessionId: 's', agentId: 'demo', timestamp: `2026-01-01T00:01:${String(sequence).padStart(2, '0')}.000Z`, payload };
}
const settle = async () => {
  for (let i = 0; i < 5; i++) await new Promise((r) => setTimeout(r, 0));
};
const history = (n: number) => Array.from({ length: n }, (_, i) => ev(i + 1, 'run.message.delta', { messageId: 'm', text: `${i + 1} ` }));

describe('TimelineState', () => {
  it('loads the history page by page', async () => {
    const api = createMemoryApi();
    api.events_.set('run_1', history(2500));
    const t = new TimelineState(api, 'run_1');
    await t.load();
    expect(t.status).toBe('ready');
    expect(t.data.last).toBe(2500);
    expect(api.calls.filter((c) => c.method === 'runs.events').map((c) => c.args[1])).toEqual([0, 1000]); // a first page of 1,000, then pages of 5,000
    expect(t.data.items).toHaveLength(1);
  });

  it('keeps live events that arrive during the load, without duplicates', async () => {
    const api = createMemoryApi();
    api.events_.set('run_1', history(5));
    const t = new TimelineState(api, 'run_1');
    const loading = t.load();
    t.apply([ev(6, 'run.message.delta', { messageId: 'm', text: '6 ' }), ev(5, 'run.message.delta', { messageId: 'm', text: '5 ' })]);
    await loading;
    expect(t.data.last).toBe(6);
    expect(t.data.items[0]).toMatchObject({ text: '1 2 3 4 5 6 ' });
  });

  it('re-reads on a hole in the live events and on system.gap', async () => {
    const api = createMemoryApi();
    api.events_.set('run_1', history(3));
    const t = new TimelineState(api, 'run_1');
    await t.load();
    api.events_.set('run_1', history(8));
    t.apply([history(8)[6]!]); // 7 arrives, 4..6 missing
    await settle();
    expect(t.data.last).toBe(8);
    expect(api.calls.filter((c) => c.method === 'runs.events').at(-1)?.args).toEqual(['run_1', 3, 5000]);

    api.events_.set('run_1', history(10));
    t.apply([{ ...ev(0, 'system.gap'), payload: { runId: 'run_1', fromSequence: 9, toSequence: 10, reason: 'subscriber_overflow' } }]);
    await settle();
    expect(t.data.last).toBe(10);
    expect(t.data.items[0]).toMatchObject({ text: '1 2 3 4 5 6 7 8 9 10 ' });
  });

  it('shows a hole the server cannot fill, and goes on after it', async () => {
    const api = createMemoryApi();
    api.events_.set('run_1', history(3));
    const t = new TimelineState(api, 'run_1');
    await t.load();
    t.apply([ev(7, 'run.completed', { doneReason: 'natural' })]); // 4..6 were pruned
    await settle();
    expect(t.data.items.map((i) => i.kind)).toEqual(['message', 'gap', 'end']);
    expect(t.data.items[1]).toMatchObject({ from: 4, to: 6 });
    expect([t.data.last, t.data.needsFill]).toEqual([7, false]);
  });
});

describe('ReviewState', () => {
  it('live events move the run summary, the inbox and the open timeline', async () => {
    const api = createMemoryApi({ runs: [run] });
    api.events_.set('run_1', history(5));
    const review = new ReviewState(api);
    await review.start();
    const t = review.timeline('run_1');
    await settle();

    api.emit([
      ev(6, 'run.tool.call', { toolCallId: 'call_s4_1', name: 'run_shell', arguments: { command: 'git status --short' } }),
      ev(7, 'run.approval.requested', shellRequest),
      ev(8, 'run.status.changed', { from: 'Running', to: 'NeedsApproval' }),
    ]);
    await settle();
    const summary = review.runs.get('run_1')!;
    expect([summary.state, summary.coarse, summary.pendingApprovals, summary.lastEventAt]).toEqual([
      'NeedsApproval',
      'waiting',
      1,
      '2026-01-01T00:01:08.000Z',
    ]);
    expect(review.approvals.pending.map((a) => a.approvalId)).toEqual(['apr_shell']);
    expect(t.data.items.some((i) => i.kind === 'tool' && i.approval?.request.approvalId === 'apr_shell')).toBe(true);

    api.emit([ev(9, 'run.approval.resolved', { approvalId: 'apr_shell', decision: 'approve_once' }), ev(10, 'run.status.changed', { from: 'NeedsApproval', to: 'Running' })]);
    await settle();
    expect(review.approvals.pending).toEqual([]);
    expect([summary.state, summary.pendingApprovals]).toEqual(['Running', 0]);
    review.stop();
  });

  it('a run first seen in the stream is fetched and listed', async () => {
    const api = createMemoryApi();
    const review = new ReviewState(api);
    await review.start();
    api.runs_.push({ ...run, id: 'run_cli', task: 'Started from the CLI' });
    api.emit([ev(1, 'run.created', {}, 'run_cli')]);
    await settle();
    expect(review.runs.items.map((r) => r.task)).toEqual(['Started from the CLI']);
  });

  it('dismissing an approval remembers it; deciding removes it from the inbox', async () => {
    const api = createMemoryApi({ runs: [run], approvals: [{ ...shellRequest }] });
    const review = new ReviewState(api);
    await review.start();
    const a = review.approvals;
    a.show('apr_shell');
    expect(a.open?.approvalId).toBe('apr_shell');
    a.dismiss();
    expect([a.openId, a.dismissed]).toEqual([null, ['apr_shell']]);
    a.show('apr_shell');
    await a.decide({ approvalId: 'apr_shell', decision: 'approve_once', subjectHash: 'sha256:shellshell' });
    expect([a.openId, a.pending.length]).toEqual([null, 0]);
  });

  it('routes by hash', () => {
    for (const h of ['#/', '#/new', '#/new/ws_1', '#/inbox', '#/run/run_1']) expect(viewHash(parseHash(h))).toBe(h);
    expect(parseHash('')).toEqual({ name: 'home' });
    expect(parseHash('#/nonsense')).toEqual({ name: 'home' });
  });
});
