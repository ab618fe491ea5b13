import { fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { describe, expect, it } from 'vitest';
import { flushSync } from 'svelte';
import Timeline from './Timeline.svelte';
import type { RunEvent } from '../../lib/api';
import { createMemoryApi } from '../../lib/api/memory';
import { TimelineState } from '../../lib/state/timeline.svelte';
import { patchRequest } from '../../lib/testdata/approvals';

function ev(sequence: number, type: string, payload: unknown = {}): RunEvent {
  return { schemaVersion: 1, id: `e${sequence}`, sequence, type, runId: 'run_1', sessionId: 's', agentId: 'demo', timestamp: '2026-01-01T00:00:00.000Z', payload };
}

/** A run of n turns: a streamed message and a tool call each; the first turn also applies an approved patch. */
function run(turns: number): RunEvent[] {
  const out: RunEvent[] = [ev(1, 'run.created')];
  const add = (type: string, payload: unknown) => out.push(ev(out.length + 1, type, payload));
  add('run.approval.requested', { ...patchRequest, runId: 'run_1' });
  add('run.approval.resolved', { approvalId: patchRequest.approvalId, decision: 'approve_once' });
  add('run.patch.applied', { tool: 'write_file', files: [{ path: 'NOTES.md', action: 'modified' }], hunks: { path: 'NOTES.md', approved: [1], of: 2 } });
  for (let i = 0; i < turns; i++) {
    add('run.message.delta', { messageId: `m${i}`, text: `turn ${i} ` });
    add('run.message.completed', { messageId: `m${i}`, text: `turn ${i} done` });
    add('run.tool.call', { toolCallId: `c${i}`, name: 'read_file', arguments: { path: `f${i}.go` } });
    add('run.tool.result', { toolCallId: `c${i}`, status: 'Succeeded', content: 'ok' });
  }
  return out;
}

async function setup(turns: number) {
  const api = createMemoryApi();
  api.events_.set('run_1', run(turns));
  const timeline = new TimelineState(api, 'run_1');
  await timeline.load();
  render(Timeline, { timeline, scripted: true, pendingIds: [], onReview: () => {} });
  flushSync();
  return timeline;
}

describe('Timeline (virtualised)', () => {
  it('keeps only a window of a long run in the DOM, and counts rows as they arrive', async () => {
    const timeline = await setup(3000); // 6,002 rows (the lifecycle is the status line, not a row)
    const list = screen.getByTestId('timeline');
    expect(list.dataset.count).toBe('6002');
    const rows = () => [...list.querySelectorAll(':scope > li')];
    expect(rows().length).toBeGreaterThan(5);
    expect(rows().length).toBeLessThan(80);
    // (Opening at the end needs layout: lib/virtual's tests and the browser benchmark cover it.)
    expect(rows()[0]).toHaveAttribute('aria-setsize', '6002');

    timeline.apply([ev(12_005, 'run.message.delta', { messageId: 'late', text: 'a new message' })]);
    flushSync();
    await waitFor(() => expect(list.dataset.count).toBe('6003'));
  });

  it('renders a short run whole', async () => {
    await setup(5);
    const list = screen.getByTestId('timeline');
    expect(list.querySelectorAll(':scope > li')).toHaveLength(Number(list.dataset.count));
    expect(within(list).getAllByTestId('timeline-message')).toHaveLength(5);
  });

  it('shows the approved part of an applied patch on request', async () => {
    await setup(2);
    const patch = screen.getByTestId('timeline-patch');
    expect(patch).toHaveTextContent('1 of 2 changes were approved.');
    expect(within(patch).queryByTestId('diff-view')).toBeNull();
    const toggle = within(patch).getByTestId('timeline-patch-toggle');
    expect(toggle).toHaveAttribute('aria-expanded', 'false');
    await fireEvent.click(toggle);
    expect(toggle).toHaveAttribute('aria-expanded', 'true');
    // The diff viewer is its own chunk, loaded (compiled, in vitest) on the first click.
    const view = await within(patch).findByTestId('diff-view', {}, { timeout: 30_000 });
    // Only the approved second hunk: "+eleven".
    expect([...view.querySelectorAll('tr')].map((r) => r.dataset.op)).toEqual(['context', 'add', 'context']);
    expect(within(view).getAllByTestId('diff-hunk')).toHaveLength(1);
  });
});
