import { describe, expect, it } from 'vitest';
import type { StreamHandlers } from './contract';
import { followEvents } from './follow';
import { createMemoryApi } from './memory';
import type { RunEvent } from './types';

const ev = (runId: string, sequence: number): RunEvent => ({
  schemaVersion: 1,
  id: `evt_${runId}_${sequence}`,
  sequence,
  type: 'run.message.delta',
  runId,
  sessionId: 'ses_1',
  agentId: 'demo',
  timestamp: '2026-01-01T00:00:00.000Z',
  payload: {},
});
const settle = () => new Promise((r) => setTimeout(r, 0));

describe('followEvents', () => {
  it('after a reconnect, re-reads what was missed; no gap, no duplicate', async () => {
    const mem = createMemoryApi();
    let h: StreamHandlers | null = null;
    const api = { runs: mem.runs, events: { subscribe: (x: StreamHandlers) => ((h = x), () => {}) } };
    const got: number[] = [];
    const f = followEvents(api, { deliver: (_r, evs) => got.push(...evs.map((e) => e.sequence)) });
    h!.onStatus?.('open');
    h!.onEvents([ev('run_1', 1), ev('run_1', 2)]);

    // The stream drops; the run goes on to 4 meanwhile.
    h!.onStatus?.('reconnecting');
    mem.events_.set('run_1', [1, 2, 3, 4].map((n) => ev('run_1', n)));
    h!.onStatus?.('open');
    await settle();
    await settle();
    // Live events resume, overlapping what the re-read returned.
    h!.onEvents([ev('run_1', 4), ev('run_1', 5)]);

    expect(got).toEqual([1, 2, 3, 4, 5]);
    expect(f.last('run_1')).toBe(5);
    expect(mem.calls.filter((c) => c.method === 'runs.events').map((c) => c.args)).toEqual([['run_1', 2, 500]]);
  });

  it('does not re-read on the first open', async () => {
    const mem = createMemoryApi();
    let h: StreamHandlers | null = null;
    followEvents(
      { runs: mem.runs, events: { subscribe: (x: StreamHandlers) => ((h = x), () => {}) } },
      { deliver: () => {} },
    ).track('run_1', 3);
    h!.onStatus?.('open');
    await settle();
    expect(mem.calls).toEqual([]);
  });

  it('hands system.changed to onSystem and never to the sequencer', async () => {
    const mem = createMemoryApi();
    let h: StreamHandlers | null = null;
    const got: number[] = [];
    const changed: string[] = [];
    followEvents(
      { runs: mem.runs, events: { subscribe: (x: StreamHandlers) => ((h = x), () => {}) } },
      { deliver: (_r, evs) => got.push(...evs.map((e) => e.sequence)), onSystem: (w) => changed.push(w) },
    );
    h!.onStatus?.('open');
    const sys = { ...ev('', 0), type: 'system.changed', payload: { what: 'workspaces' } } as RunEvent;
    h!.onEvents([ev('run_1', 1), sys, ev('run_1', 2)]);
    await settle();
    expect(changed).toEqual(['workspaces']);
    expect(got).toEqual([1, 2]);
    expect(mem.calls).toEqual([]);
  });
});
