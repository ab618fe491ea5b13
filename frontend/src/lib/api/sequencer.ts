// Transport-neutral ordering of live events: per run, deliver each sequence
// exactly once and in order. Duplicates (a resumed stream re-sending what was
// seen) are dropped; a hole, or a `system.gap` event, is filled by re-reading
// the range through runs.events before later events are delivered.
import type { RunsAPI } from './contract';
import type { GapPayload, RunEvent } from './types';

const PAGE = 500;

export interface SequencerOptions {
  runs: Pick<RunsAPI, 'events'>;
  /** In-order events of one run; never a duplicate, never a hole. */
  deliver(runId: string, events: RunEvent[]): void;
  onError?(err: unknown): void;
}

interface RunTrack {
  last: number;
  pending: RunEvent[];
  filling: boolean;
}

export class Sequencer {
  private tracks = new Map<string, RunTrack>();

  constructor(private o: SequencerOptions) {}

  /** Declares that the caller already holds events 1..last of runId. */
  track(runId: string, last: number): void {
    const t = this.tracks.get(runId);
    if (t) t.last = Math.max(t.last, last);
    else this.tracks.set(runId, { last, pending: [], filling: false });
  }

  /** The last sequence delivered for runId (0 when unknown). */
  last(runId: string): number {
    return this.tracks.get(runId)?.last ?? 0;
  }

  /**
   * Re-reads every tracked run after its last sequence. Call it when a live
   * stream reconnects: the all-runs stream does not resume by itself
   * (app/httpapi: its cursor is ignored), so what happened while it was down
   * comes from runs.events.
   */
  resync(): void {
    for (const [runId, t] of this.tracks) this.fill(runId, t);
  }

  push(batch: RunEvent[]): void {
    const byRun = new Map<string, RunEvent[]>();
    for (const ev of batch) {
      if (ev.type === 'system.gap') {
        const gap = ev.payload as GapPayload;
        const t = this.ensure(gap.runId, gap.fromSequence - 1);
        this.fill(gap.runId, t);
        continue;
      }
      const list = byRun.get(ev.runId) ?? [];
      list.push(ev);
      byRun.set(ev.runId, list);
    }
    for (const [runId, events] of byRun) {
      // A run first seen mid-stream starts where the stream is.
      const t = this.ensure(runId, (events[0]?.sequence ?? 1) - 1);
      t.pending.push(...events);
      this.drain(runId, t);
    }
  }

  private ensure(runId: string, last: number): RunTrack {
    let t = this.tracks.get(runId);
    if (!t) {
      t = { last: Math.max(0, last), pending: [], filling: false };
      this.tracks.set(runId, t);
    }
    return t;
  }

  /** Pops the consecutive run after t.last from pending, dropping duplicates. */
  private take(t: RunTrack): RunEvent[] {
    t.pending.sort((a, b) => a.sequence - b.sequence);
    const out: RunEvent[] = [];
    while (t.pending.length > 0) {
      const ev = t.pending[0]!;
      if (ev.sequence > t.last + 1) break;
      t.pending.shift();
      if (ev.sequence <= t.last) continue;
      t.last = ev.sequence;
      out.push(ev);
    }
    return out;
  }

  private drain(runId: string, t: RunTrack): void {
    const out = this.take(t);
    if (out.length > 0) this.o.deliver(runId, out);
    if (t.pending.length > 0) this.fill(runId, t);
  }

  /** Re-reads after t.last until no hole remains or the server has no more. */
  private fill(runId: string, t: RunTrack): void {
    if (t.filling) return;
    t.filling = true;
    const loop = async () => {
      for (;;) {
        const before = t.last;
        const page = await this.o.runs.events(runId, t.last, PAGE);
        t.pending.push(...page);
        const out = this.take(t);
        if (out.length > 0) this.o.deliver(runId, out);
        if (t.last === before) break;
        if (t.pending.length === 0 && page.length < PAGE) break;
      }
    };
    loop()
      .catch((err: unknown) => this.o.onError?.(err))
      .finally(() => {
        t.filling = false;
      });
  }
}
