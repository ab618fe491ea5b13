import { describe, expect, it } from 'vitest';
import type { RunEvent } from '../api';
import { EVENT_TYPES, type RunEvent as Ev } from '../api';
import { applyEvents, createTimeline, filled, RENDERED_AS, type MessageItem, type ToolItem } from './model';
import { activity, elapsed, shownState } from './status';

let clock = 0;
function ev(sequence: number, type: string, payload: unknown = {}): RunEvent {
  return {
    schemaVersion: 1,
    id: `evt_${sequence}`,
    sequence,
    type,
    runId: 'run_1',
    sessionId: 'ses_1',
    agentId: 'demo',
    timestamp: new Date(Date.UTC(2026, 0, 1, 0, 0, clock++)).toISOString(),
    payload,
  };
}

const delta = (seq: number, text: string, messageId = 'msg_1') => ev(seq, 'run.message.delta', { messageId, text });

/** The demo's opening, as the engine emits it. */
function opening(): RunEvent[] {
  return [
    ev(1, 'run.created', { profile: 'demo', scripted: true, task: 'Tour' }),
    ev(2, 'run.status.changed', { from: 'Created', to: 'Planned' }),
    ev(3, 'run.status.changed', { from: 'Planned', to: 'Accepted' }),
    ev(4, 'run.status.changed', { from: 'Accepted', to: 'Preparing', reason: 'slots acquired' }),
    ev(5, 'run.started', { from: 'Preparing', to: 'Running' }),
    delta(6, 'This '),
    delta(7, 'is '),
    delta(8, 'the **demo**.'),
    ev(9, 'run.message.completed', { messageId: 'msg_1', role: 'assistant', text: 'This is the **demo**.' }),
    ev(10, 'run.tool.call', { toolCallId: 'call_1', name: 'read_file', arguments: { path: 'README.md' } }),
    ev(11, 'run.file.read', { tool: 'read_file', path: 'README.md', bytes: 8, startLine: 1, endLine: 1 }),
    ev(12, 'run.tool.result', { toolCallId: 'call_1', status: 'Succeeded', content: '# Hello\n', isError: false }),
    ev(13, 'run.checkpoint.created', { checkpointId: 'ckp_1', kind: 'step', step: 1 }),
  ];
}

describe('timeline reducer', () => {
  it('merges streamed deltas into one message row, then takes the completed text', () => {
    const t = createTimeline();
    applyEvents(t, opening().slice(0, 7));
    const msgs = () => t.items.filter((i): i is MessageItem => i.kind === 'message');
    expect(msgs()).toHaveLength(1);
    expect(msgs()[0]).toMatchObject({ text: 'This is ', done: false });

    applyEvents(t, opening().slice(7));
    expect(msgs()).toHaveLength(1);
    expect(msgs()[0]).toMatchObject({ text: 'This is the **demo**.', done: true, role: 'assistant' });
  });

  it('keeps messages apart by id, even when their deltas interleave', () => {
    const t = createTimeline();
    applyEvents(t, [delta(1, 'a', 'm1'), delta(2, 'x', 'm2'), delta(3, 'b', 'm1'), delta(4, 'y', 'm2')]);
    expect(t.items.map((i) => (i as MessageItem).text)).toEqual(['ab', 'xy']);
  });

  it('keeps lifecycle transitions out of the rows: they are the status line\'s history', () => {
    const t = createTimeline();
    applyEvents(t, opening());
    expect(t.steps.map((s) => s.to)).toEqual(['Created', 'Planned', 'Accepted', 'Preparing', 'Running']);
    expect(t.steps[3]).toMatchObject({ reason: 'slots acquired' });
    expect(t.state).toBe('Running');
    expect(t.items.map((i) => i.kind)).toEqual(['message', 'tool']);
    expect(t.checkpoints).toBe(1);
  });

  it('folds the file read and the result into the tool call row', () => {
    const t = createTimeline();
    applyEvents(t, opening());
    const tool = t.items.find((i): i is ToolItem => i.kind === 'tool')!;
    expect(tool).toMatchObject({
      name: 'read_file',
      arguments: { path: 'README.md' },
      reads: [{ path: 'README.md', bytes: 8, startLine: 1, endLine: 1 }],
      result: { status: 'Succeeded', content: '# Hello\n', isError: false },
    });
  });

  it('applies events in sequence order whatever order they arrive in, and drops duplicates', () => {
    const all = opening();
    const inOrder = createTimeline();
    applyEvents(inOrder, all);

    const shuffled = createTimeline();
    applyEvents(shuffled, [all[2]!, all[0]!, all[1]!]);
    applyEvents(shuffled, [all[5]!, all[4]!, all[3]!, all[3]!, all[0]!]);
    applyEvents(shuffled, all.slice(6).reverse());
    applyEvents(shuffled, all); // a full replay changes nothing
    expect(shuffled.last).toBe(13);
    expect(shuffled.needsFill).toBe(false);
    expect(JSON.stringify(shuffled.items)).toBe(JSON.stringify(inOrder.items));
  });

  it('holds back events after a hole and asks for a re-read; the re-read fills it', () => {
    const all = opening();
    const t = createTimeline();
    expect(applyEvents(t, all.slice(0, 5))).toBe(false);
    // 6..8 are lost; 9 arrives.
    expect(applyEvents(t, [all[8]!])).toBe(true);
    expect(t.last).toBe(5);
    expect(t.needsFill).toBe(true);
    expect(t.items.some((i) => i.kind === 'message')).toBe(false);

    // The re-read (runs.events after 5) returns 6.. including what was held.
    applyEvents(t, all.slice(5));
    filled(t);
    expect(t.needsFill).toBe(false);
    expect(t.last).toBe(13);
    expect((t.items[0] as MessageItem).text).toBe('This is the **demo**.');
  });

  it('a system.gap ahead of what was applied asks for a re-read; one behind it does not', () => {
    const all = opening();
    const t = createTimeline();
    applyEvents(t, all.slice(0, 5));
    const gap = (from: number, to: number) =>
      ({ ...ev(0, 'system.gap'), payload: { runId: 'run_1', fromSequence: from, toSequence: to, reason: 'subscriber_overflow' } }) as RunEvent;
    expect(applyEvents(t, [gap(2, 4)])).toBe(false);
    expect(applyEvents(t, [gap(6, 9)])).toBe(true);
    applyEvents(t, all.slice(5));
    filled(t);
    expect(t.needsFill).toBe(false);
    expect(t.last).toBe(13);
  });

  it('puts an approval in its call\'s row, before the result, and resolves it there', () => {
    const t = createTimeline();
    const request = { approvalId: 'apr_1', runId: 'run_1', toolCallId: 'call_w', kind: 'patch', title: 'Create X', subjectHash: 'sha256:1' };
    applyEvents(t, [
      ev(1, 'run.tool.call', { toolCallId: 'call_w', name: 'write_file', arguments: { path: 'X' } }),
      ev(2, 'run.approval.requested', request),
      ev(3, 'run.status.changed', { from: 'Running', to: 'NeedsApproval' }),
      ev(4, 'run.approval.resolved', { approvalId: 'apr_1', decision: 'reject_and_tell', reason: 'not now', resolver: 'user' }),
      ev(5, 'run.tool.result', { toolCallId: 'call_w', status: 'Cancelled', content: 'rejected', isError: true }),
    ]);
    expect(t.items).toHaveLength(1);
    expect(t.items[0]).toMatchObject({
      kind: 'tool',
      approvalId: 'apr_1',
      approval: { request: { approvalId: 'apr_1' }, resolved: { decision: 'reject_and_tell', reason: 'not now' } },
      result: { status: 'Cancelled' },
    });
    expect(t.state).toBe('NeedsApproval');
  });

  it('ends with the failure code, message and recovery', () => {
    const t = createTimeline();
    applyEvents(t, [
      ev(1, 'run.patch.applied', { tool: 'write_file', checkpointId: 'ck_1', files: [{ path: 'A.md', action: 'created' }] }),
      ev(2, 'run.failed', { from: 'Running', doneReason: 'run_timeout', code: 'run_timeout', message: 'the run took longer than 60 s', recovery: 'Narrow it.' }),
      ev(3, 'some.future.event', {}),
    ]);
    expect(t.items[0]).toMatchObject({ kind: 'patch', files: [{ path: 'A.md', action: 'created' }] });
    expect(t.end).toMatchObject({ outcome: 'Failed', code: 'run_timeout', message: 'the run took longer than 60 s' });
    expect(t.state).toBe('Failed');
    expect(t.items.at(-1)).toMatchObject({ kind: 'other', type: 'some.future.event' });
  });

  it("keeps a failure's own next step and rows accepted advisory gating", () => {
    const t = createTimeline();
    applyEvents(t, [
      ev(1, 'runtime.gating_advisory', { runtime: 'codex', profile: 'cx', kinds: ['network', 'shell'], acceptedBy: 'gating = "advisory"' }),
      ev(2, 'run.failed', { code: 'runtime_unavailable', message: 'refused', recovery: 'Check the CLI.', next: 'Add accept_advisory.' }),
    ]);
    expect(t.items[0]).toMatchObject({ kind: 'advisory', runtime: 'codex', kinds: ['network', 'shell'], acceptedBy: 'gating = "advisory"' });
    expect(t.end).toMatchObject({ code: 'runtime_unavailable', recovery: 'Check the CLI.', next: 'Add accept_advisory.' });
  });

  it('shows a hook\'s annotations of a response as one row', () => {
    const t = createTimeline();
    applyEvents(t, [
      ev(1, 'run.inference.annotated', {
        messageId: 'msg_1',
        step: 1,
        hook: 'lint',
        annotations: [{ label: 'style', text: 'prefer early returns' }, { label: 'risk', text: 'touches auth', toolCallId: 'c1' }, 'junk'],
      }),
    ]);
    expect(t.items).toHaveLength(1);
    expect(t.items[0]).toMatchObject({
      kind: 'annotation',
      hook: 'lint',
      notes: [{ label: 'style', text: 'prefer early returns' }, { label: 'risk', text: 'touches auth' }],
    });
  });

  it("streams a running tool's output into its row until the result arrives", () => {
    const t = createTimeline();
    applyEvents(t, [
      ev(1, 'run.tool.call', { toolCallId: 'c1', name: 'run_shell', arguments: { command: 'make' } }),
      ev(2, 'run.tool.delta', { toolCallId: 'c1', text: 'building\n' }),
      ev(3, 'run.tool.delta', { toolCallId: 'c1', text: 'linking\n' }),
      ev(4, 'run.tool.delta', { toolCallId: 'nobody', text: 'stray\n' }),
    ]);
    expect(t.items).toHaveLength(1);
    expect(t.items[0]).toMatchObject({ kind: 'tool', live: 'building\nlinking\n', result: null });
    applyEvents(t, [ev(5, 'run.tool.delta', { toolCallId: 'c1', text: 'x'.repeat(70_000) })]);
    const live = (t.items[0] as { live: string }).live;
    expect(live.length).toBe(64 * 1024);
    expect(live.endsWith('x')).toBe(true);
  });

  it('replaces a changed row with a new object and keeps unchanged rows as they were', () => {
    const t = createTimeline();
    applyEvents(t, opening().slice(0, 7));
    const [msg] = t.items;
    applyEvents(t, [delta(8, 'more')]);
    expect(t.items[0]).not.toBe(msg);
    expect((msg as MessageItem).text).toBe('This is '); // the old row is untouched
    expect((t.items[0] as MessageItem).text).toBe('This is more');
    applyEvents(t, opening().slice(8));
    const [first, tool] = t.items;
    applyEvents(t, [ev(14, 'run.completed', { doneReason: 'done' })]);
    expect(t.items[0]).toBe(first);
    expect(t.items[1]).toBe(tool);
    expect(t.end).toBe(t.items.at(-1));
  });

  it('gives a file read to the newest call still running, even after others finished', () => {
    const t = createTimeline();
    applyEvents(t, [
      ev(1, 'run.tool.call', { toolCallId: 'a', name: 'read_file', arguments: {} }),
      ev(2, 'run.tool.call', { toolCallId: 'b', name: 'grep', arguments: {} }),
      ev(3, 'run.tool.result', { toolCallId: 'b', status: 'Succeeded', content: '' }),
      ev(4, 'run.file.read', { path: 'x.go' }),
      ev(5, 'run.tool.result', { toolCallId: 'a', status: 'Succeeded', content: '' }),
      ev(6, 'run.file.read', { path: 'stray.go' }),
    ]);
    expect(t.items.map((i) => (i.kind === 'tool' ? [i.toolCallId, i.reads.map((r) => r.path)] : i.kind))).toEqual([
      ['a', ['x.go']],
      ['b', []],
      'notice',
    ]);
    expect(t.openTools).toEqual([]);
  });

  it('links an applied patch to the approval that let it through, with the hunks kept', () => {
    const t = createTimeline();
    const preview = { path: 'NOTES.md', unified: '--- a/NOTES.md\n+++ b/NOTES.md\n@@ -1 +1 @@\n-a\n+b\n' };
    const req = (id: string, kind: string) => ({ approvalId: id, runId: 'run_1', toolCallId: `c_${id}`, kind, title: id, preview, subjectHash: 'h' });
    applyEvents(t, [
      ev(1, 'run.approval.requested', req('apr_1', 'patch')),
      ev(2, 'run.approval.resolved', { approvalId: 'apr_1', decision: 'approve_once' }),
      ev(3, 'run.patch.applied', { tool: 'write_file', files: [{ path: 'NOTES.md', action: 'modified' }], hunks: { path: 'NOTES.md', approved: [0, 2], of: 3 } }),
      ev(4, 'run.approval.requested', req('apr_2', 'patch')),
      ev(5, 'run.approval.resolved', { approvalId: 'apr_2', decision: 'reject_and_tell' }),
      ev(6, 'run.patch.applied', { tool: 'write_file', files: [{ path: 'OTHER.md', action: 'created' }] }),
    ]);
    const patches = t.items.filter((i) => i.kind === 'patch');
    expect(patches[0]).toMatchObject({ preview, hunks: { path: 'NOTES.md', approved: [0, 2], of: 3 } });
    // A rejected approval lends its diff to nothing; an applied patch without one has none.
    expect(patches[1]).not.toHaveProperty('preview');
    expect(t.approvedPatch).toBeNull();
  });

  it('renders every event type the backend defines: none becomes a raw "Event x" row', () => {
    // A sample of each type, in a run that has a call open so folded types have a home.
    const payloads: Record<string, unknown> = {
      'run.tool.call': { toolCallId: 'c9', name: 'run_shell', arguments: { command: 'ls' } },
      'run.tool.delta': { toolCallId: 'c9', text: 'x' },
      'run.tool.result': { toolCallId: 'c9', status: 'Succeeded', content: '' },
      'run.approval.requested': { approvalId: 'a9', runId: 'run_1', toolCallId: 'c9', kind: 'shell', title: 'ls', subjectHash: 'h' },
      'run.approval.resolved': { approvalId: 'a9', decision: 'approve_once' },
      'run.patch.rejected': { toolCallId: 'c9', approvalId: 'a9', reason: 'drift' },
      'runtime.version_drift': { runtime: 'acp', agent: 'gemini', version: '0.9', testedVersion: '0.8', message: 'untested' },
      'run.workspace.conflict': { code: 'workspace_conflict', files: [{ path: 'a.go' }], message: 'm', next: 'n' },
    };
    for (const type of EVENT_TYPES) {
      expect(RENDERED_AS[type], type).toBeTruthy();
      const t = createTimeline();
      const events: Ev[] = [ev(1, 'run.tool.call', payloads['run.tool.call'])];
      events.push({ ...ev(2, type, payloads[type] ?? { path: 'a.go' }) });
      applyEvents(t, events);
      const raw = t.items.filter((i) => i.kind === 'other');
      expect(raw, `${type} is shown as a raw row`).toEqual([]);
    }
    // The check can fail: a type this build does not know is still raw.
    const t = createTimeline();
    applyEvents(t, [ev(1, 'run.from.the.future', {})]);
    expect(t.items.map((i) => i.kind)).toEqual(['other']);
  });

  it('never says Applying during an approved shell command, only while files are written', () => {
    const t = createTimeline();
    const shell = { approvalId: 'a1', runId: 'run_1', toolCallId: 'c1', kind: 'shell', title: 'make', subjectHash: 'h' };
    applyEvents(t, [
      ...opening().slice(0, 5),
      ev(6, 'run.tool.call', { toolCallId: 'c1', name: 'run_shell', arguments: { command: 'make' } }),
      ev(7, 'run.approval.requested', shell),
      ev(8, 'run.status.changed', { from: 'Running', to: 'NeedsApproval' }),
    ]);
    expect(activity(t, 'Created')).toEqual({ kind: 'approval' });
    applyEvents(t, [
      ev(9, 'run.approval.resolved', { approvalId: 'a1', decision: 'approve_once' }),
      ev(10, 'run.status.changed', { from: 'NeedsApproval', to: 'Applying' }),
    ]);
    expect(t.state).toBe('Applying');
    expect(shownState(t, 'Created')).toBe('Running');
    expect(activity(t, 'Created')).toMatchObject({ kind: 'tool', tool: { toolCallId: 'c1' } });
    const patch = { approvalId: 'a2', runId: 'run_1', toolCallId: 'c2', kind: 'patch', title: 'X', subjectHash: 'h' };
    applyEvents(t, [
      ev(11, 'run.tool.result', { toolCallId: 'c1', status: 'Succeeded', content: '' }),
      ev(12, 'run.status.changed', { from: 'Applying', to: 'Running' }),
      ev(13, 'run.tool.call', { toolCallId: 'c2', name: 'write_file', arguments: { path: 'X' } }),
      ev(14, 'run.approval.requested', patch),
      ev(15, 'run.approval.resolved', { approvalId: 'a2', decision: 'approve_once' }),
      ev(16, 'run.status.changed', { from: 'NeedsApproval', to: 'Applying' }),
    ]);
    expect(shownState(t, 'Created')).toBe('Applying');
    expect(activity(t, 'Created')).toEqual({ kind: 'applying' });
    applyEvents(t, [ev(17, 'run.completed', { doneReason: 'done' })]);
    expect(activity(t, 'Created')).toBeNull();
  });

  it('formats elapsed time', () => {
    expect([elapsed(0), elapsed(12_400), elapsed(65_000), elapsed(3_725_000), elapsed(-5)]).toEqual(['0 s', '12 s', '1:05', '1:02:05', '0 s']);
  });
});
