// followEvents: live events of every run, in order, exactly once, across
// reconnects, on either transport. This is what state classes use; they never
// see the raw stream.
import type { Api, StreamHandlers } from './contract';
import type { ApiError } from './error';
import { Sequencer } from './sequencer';
import type { RunEvent } from './types';

export interface FollowOptions {
  deliver(runId: string, events: RunEvent[]): void;
  onStatus?: StreamHandlers['onStatus'];
  onError?(err: ApiError | unknown): void;
  /**
   * Something outside the runs changed (workspaces, settings, profiles),
   * whoever changed it: the engine's system.changed, which has no run and
   * no sequence, so it never reaches the sequencer.
   */
  onSystem?(what: string): void;
  /**
   * Re-read every tracked run after its cursor once the stream opens: a
   * follower that replaces a lost one (the reconnect button) has missed
   * what happened in between.
   */
  resync?: boolean;
}

export interface Follower {
  /** Declares that the caller holds events 1..last of runId (e.g. after a page load). */
  track(runId: string, last: number): void;
  last(runId: string): number;
  stop(): void;
}

export function followEvents(api: Pick<Api, 'events' | 'runs'>, o: FollowOptions): Follower {
  const seq = new Sequencer({ runs: api.runs, deliver: o.deliver, onError: o.onError });
  let interrupted = o.resync ?? false;
  const stop = api.events.subscribe({
    onEvents: (batch) => {
      const runs = batch.filter((e) => e.type !== 'system.changed');
      for (const e of batch) {
        if (e.type === 'system.changed') o.onSystem?.((e.payload as { what?: string } | null)?.what ?? '');
      }
      if (runs.length > 0) seq.push(runs);
    },
    onStatus(status) {
      if (status === 'reconnecting') interrupted = true;
      if (status === 'open' && interrupted) {
        interrupted = false;
        seq.resync();
      }
      o.onStatus?.(status);
    },
    onError: o.onError,
  });
  return { track: (r, n) => seq.track(r, n), last: (r) => seq.last(r), stop };
}
