import { describe, expect, it } from 'vitest';
import { createMemoryApi } from './memory';
import { Sequencer } from './sequencer';
import type { RunEvent } from './types';

const ev = (runId: string, sequence: number, type = 'run.message.delta', payload: unknown = {}): RunEvent => ({
  schemaVersion: 1,
  id: `evt_${runId}_${sequence}`,
  sequence,
  type,
  runId,
  sessionId: 'ses_1',
  agentId: 'demo',
  timestamp: '2026-01-01T00:00:00.000Z',
  payload,
});

const settle = () => new Promise((r) => setTimeout(r, 0));

function setup(stored: Record<string, number> = {}) {
  const api = createMemoryApi();
  for (const [run, n] of Object.entries(stored)) {
    api.events_.set(run, Array.from({ length: n }, (_, i) => ev(run, i + 1)));
  }
  const delivered: Record<string, number[]> = {};
  const seq = new Sequencer({
    runs: api.runs,
    deliver: (runId, events) => (delivered[runId] ??= []).push(...events.map((e) => e.sequence)),
  });
  return { api, seq, delivered };
}

describe('Sequencer', () => {
  it('delivers in order and drops duplicates from a resumed stream', () => {
    const { seq, delivered } = setup();
    seq.push([ev('a', 1), ev('a', 2)]);
    seq.push([ev('a', 2), ev('a', 3), ev('b', 1)]);
    seq.push([ev('a', 1)]);
    expect(delivered).toEqual({ a: [1, 2, 3], b: [1] });
    expect(seq.last('a')).toBe(3);
  });

  it('sorts a batch that arrives out of order', () => {
    const { seq, delivered } = setup();
    seq.track('a', 0);
    seq.push([ev('a', 2), ev('a', 1), ev('a', 3)]);
    expect(delivered).toEqual({ a: [1, 2, 3] });
  });

  it('fills a hole by re-reading the range before delivering later events', async () => {
    const { api, seq, delivered } = setup({ a: 6 });
    seq.track('a', 2);
    seq.push([ev('a', 5), ev('a', 6)]);
    expect(delivered).toEqual({});
    await settle();
    await settle();
    expect(delivered).toEqual({ a: [3, 4, 5, 6] });
    expect(api.calls.filter((c) => c.method === 'runs.events').map((c) => c.args)).toEqual([['a', 2, 500]]);
  });

  it('replays on system.gap from the last delivered sequence', async () => {
    const { api, seq, delivered } = setup({ a: 5 });
    seq.push([ev('a', 1), ev('a', 2)]);
    seq.push([{ ...ev('a', 0, 'system.gap'), payload: { runId: 'a', fromSequence: 3, toSequence: 5, reason: 'subscriber_overflow' } }]);
    await settle();
    await settle();
    expect(delivered).toEqual({ a: [1, 2, 3, 4, 5] });
    expect(api.calls.some((c) => c.method === 'runs.events' && c.args[1] === 2)).toBe(true);
  });

  it('starts a run first seen mid-stream at its first sequence', () => {
    const { seq, delivered } = setup();
    seq.push([ev('a', 40), ev('a', 41)]);
    expect(delivered).toEqual({ a: [40, 41] });
  });
});
