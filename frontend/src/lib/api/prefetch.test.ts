import { describe, expect, it } from 'vitest';
import { ApiError } from './error';
import { createMemoryApi } from './memory';
import { prefetchEvents } from './prefetch';
import type { RunEvent } from './types';

const ev = (sequence: number): RunEvent => ({
  schemaVersion: 1,
  id: `e${sequence}`,
  sequence,
  type: 'run.created',
  runId: 'run_1',
  sessionId: '',
  agentId: '',
  timestamp: '2026-01-01T00:00:00Z',
  payload: {},
});

const eventCalls = (api: ReturnType<typeof createMemoryApi>) => api.calls.filter((c) => c.method === 'runs.events').map((c) => c.args);

describe('prefetchEvents', () => {
  it('asks at once, and the first matching read takes that answer instead of asking again', async () => {
    const mem = createMemoryApi();
    mem.events_.set('run_1', [ev(1), ev(2), ev(3)]);
    const api = prefetchEvents(mem, 'run_1', 0, 2);
    expect(eventCalls(mem)).toEqual([['run_1', 0, 2]]);
    expect((await api.runs.events('run_1', 0, 2)).map((e) => e.sequence)).toEqual([1, 2]);
    expect(eventCalls(mem)).toHaveLength(1);
    // Taken once: the same read again, and any other, go to the server.
    await api.runs.events('run_1', 0, 2);
    await api.runs.events('run_1', 2, 5000);
    expect(eventCalls(mem)).toEqual([
      ['run_1', 0, 2],
      ['run_1', 0, 2],
      ['run_1', 2, 5000],
    ]);
    expect(api.runs.list).toBe(mem.runs.list);
    expect(api.transport).toBe(mem.transport);
  });

  it('does not hand its answer to a different read', async () => {
    const mem = createMemoryApi();
    mem.events_.set('run_2', [ev(1)]);
    const api = prefetchEvents(mem, 'run_1', 0, 1000);
    await api.runs.events('run_2', 0, 1000);
    await api.runs.events('run_1', 0, 5000);
    expect(eventCalls(mem)).toEqual([
      ['run_1', 0, 1000],
      ['run_2', 0, 1000],
      ['run_1', 0, 5000],
    ]);
  });

  it('passes a failed early read on to the reader', async () => {
    const mem = createMemoryApi();
    const denied = new ApiError({ code: 'not_found', message: 'no such run' });
    mem.fail('runs.events', denied);
    const api = prefetchEvents(mem, 'run_1', 0, 1000);
    await new Promise((r) => setTimeout(r, 0)); // rejected before anyone asks: must not be reported unhandled
    await expect(api.runs.events('run_1', 0, 1000)).rejects.toBe(denied);
  });
});
