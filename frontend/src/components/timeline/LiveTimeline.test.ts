// The live timeline of issue 21, rendered: the running call open with its
// streamed output and elapsed time, its approval inside it before the
// result, the lifecycle as one status line (never "Applying" during a shell
// command), every event type worded (no raw "Event x" row), and a user's
// own playbook not called a "Scripted demo".
import { render, screen, waitFor, within } from '@testing-library/svelte';
import { flushSync } from 'svelte';
import { describe, expect, it } from 'vitest';
import Timeline from './Timeline.svelte';
import { EVENT_TYPES, type RunEvent } from '../../lib/api';
import { createMemoryApi } from '../../lib/api/memory';
import { TimelineState } from '../../lib/state/timeline.svelte';

const start = Date.now() - 75_000;
function ev(sequence: number, type: string, payload: unknown = {}, at = start + sequence * 1000): RunEvent {
  return { schemaVersion: 1, id: `e${sequence}`, sequence, type, runId: 'run_1', sessionId: 's', agentId: 'p', timestamp: new Date(at).toISOString(), payload };
}

const shell = { approvalId: 'apr_1', runId: 'run_1', toolCallId: 'c1', kind: 'shell', title: 'npm test', subjectHash: 'h', policyTrace: [] };

async function setup(events: RunEvent[], o: { scripted?: boolean; demo?: boolean; pendingIds?: string[] } = {}) {
  const api = createMemoryApi();
  api.events_.set('run_1', events);
  const timeline = new TimelineState(api, 'run_1');
  await timeline.load();
  render(Timeline, { timeline, scripted: o.scripted ?? false, demo: o.demo ?? false, pendingIds: o.pendingIds ?? [], onReview: () => {} });
  flushSync();
  return timeline;
}

const opening = [
  ev(1, 'run.created'),
  ev(2, 'run.status.changed', { from: 'Created', to: 'Planned' }),
  ev(3, 'run.status.changed', { from: 'Planned', to: 'Accepted' }),
  ev(4, 'run.status.changed', { from: 'Accepted', to: 'Preparing' }),
  ev(5, 'run.started', { from: 'Preparing', to: 'Running' }),
];

describe('live timeline', () => {
  it('opens the running call with its streamed output, its approval before the result, and one status line', async () => {
    const timeline = await setup(
      [
        ...opening,
        ev(6, 'run.tool.call', { toolCallId: 'c1', name: 'run_shell', arguments: { command: 'npm test' } }),
        ev(7, 'run.approval.requested', shell),
        ev(8, 'run.status.changed', { from: 'Running', to: 'NeedsApproval' }),
      ],
      { pendingIds: ['apr_1'] },
    );
    expect(screen.queryByText(/→/)).toBeNull(); // no "Created → Planned → …" row
    const line = screen.getByTestId('run-status-line');
    expect(line.dataset.activity).toBe('approval');

    const tool = screen.getByTestId('timeline-tool');
    const approval = within(tool).getByTestId('timeline-approval');
    expect(approval).toHaveAttribute('data-approval-id', 'apr_1');

    timeline.apply([
      ev(9, 'run.approval.resolved', { approvalId: 'apr_1', decision: 'approve_once' }),
      ev(10, 'run.status.changed', { from: 'NeedsApproval', to: 'Applying' }),
      ev(11, 'run.tool.delta', { toolCallId: 'c1', text: 'PASS src/a.test.ts\n' }),
    ]);
    flushSync();
    await waitFor(() => expect(screen.getByTestId('tool-live')).toHaveTextContent('PASS src/a.test.ts'));
    const details = tool.querySelector('details')!;
    expect(details.open).toBe(true);
    expect(tool.dataset.running).toBe('true');
    expect(within(tool).getByTestId('tool-elapsed').textContent).toMatch(/^\d+(:\d\d)? ?s?$|^\d+:\d\d$/);
    // Applying, during a shell command, is shown as running that command.
    expect(screen.getByTestId('run-status-line').dataset.activity).toBe('tool');
    expect(screen.getByTestId('run-status-line')).toHaveTextContent('run_shell');
    expect(screen.getByTestId('run-status-line')).not.toHaveTextContent(/Applying/i);

    // The approval stays before the result, which folds the call.
    timeline.apply([ev(12, 'run.tool.result', { toolCallId: 'c1', status: 'Succeeded', content: 'ok' })]);
    flushSync();
    await waitFor(() => expect(within(tool).getByTestId('tool-status')).toHaveTextContent(/Succeeded/));
    expect(tool.querySelector('details')!.open).toBe(false);
    expect(within(tool).getByTestId('timeline-approval')).toBeInTheDocument();

    timeline.apply([ev(13, 'run.completed', { doneReason: 'done' })]);
    flushSync();
    await waitFor(() => expect(screen.queryByTestId('run-status-line')).toBeNull());
  });

  it('words every event type: no raw "Event x" row', async () => {
    const events: RunEvent[] = [ev(1, 'run.tool.call', { toolCallId: 'c9', name: 'run_shell', arguments: { command: 'ls' } })];
    for (const type of EVENT_TYPES) {
      if (type === 'system.gap' || type.startsWith('run.completed') || type === 'run.failed' || type === 'run.cancelled') continue;
      events.push(ev(events.length + 1, type, { toolCallId: 'c9', path: 'a.go', runtime: 'acp', agent: 'gemini', version: '1.0', files: [{ path: 'b.go' }] }));
    }
    await setup(events);
    const list = screen.getByTestId('timeline');
    expect(list).not.toHaveTextContent(/Event [a-z]+\./);
    expect(within(list).getAllByTestId('timeline-notice').length).toBeGreaterThan(5);
  });

  it('calls a user playbook\'s messages "Playbook" and only the built-in tour "Scripted demo"', async () => {
    const msg = [...opening, ev(6, 'run.message.completed', { messageId: 'm', text: 'hello' })];
    await setup(msg, { scripted: true, demo: false });
    expect(screen.getByTestId('timeline-message')).toHaveTextContent('Playbook');
    expect(screen.getByTestId('timeline-message')).not.toHaveTextContent('Scripted demo');
  });

  it('the built-in tour is the scripted demo', async () => {
    const msg = [...opening, ev(6, 'run.message.completed', { messageId: 'm', text: 'hello' })];
    await setup(msg, { scripted: true, demo: true });
    expect(screen.getByTestId('timeline-message')).toHaveTextContent('Scripted demo');
  });
});
