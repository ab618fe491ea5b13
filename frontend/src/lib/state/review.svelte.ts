// The review session: one live event follower for every run, fanned out to
// the runs list, the approvals inbox and whichever timelines are open, plus
// the current view. Timelines are cached per run, so switching runs (or
// language, or theme) never resets a timeline or refetches it.
import { followEvents, type Api, type Follower, type RunEvent } from '../api';
import { ApprovalsState } from './approvals.svelte';
import { RunsState } from './runs.svelte';
import { TimelineState } from './timeline.svelte';
import type { View } from './view';

export { parseHash, viewHash, type View } from './view';

export class ReviewState {
  readonly runs: RunsState;
  readonly approvals: ApprovalsState;
  view = $state<View>({ name: 'home' });
  stream = $state<'connecting' | 'open' | 'reconnecting' | 'closed'>('connecting');
  /** Called with what changed outside the runs (system.changed), to reload it. */
  onSystemChange: ((what: string) => void) | null = null;

  #api: Pick<Api, 'runs' | 'approvals' | 'events'>;
  #timelines = new Map<string, TimelineState>();
  #follower: Follower | null = null;
  #reconnected = false;
  // Each follower's generation: a stopped follower's late "closed" must not
  // overwrite the status of the one that replaced it.
  #gen = 0;

  constructor(api: Pick<Api, 'runs' | 'approvals' | 'events'>) {
    this.#api = api;
    this.runs = new RunsState(api);
    this.approvals = new ApprovalsState(api);
  }

  /** Loads runs and approvals and starts following live events. */
  async start(): Promise<void> {
    this.#follow();
    await Promise.all([this.runs.load(), this.approvals.load()]);
    this.#track();
  }

  /**
   * Drops the current stream and connects again now (the reconnect banner's
   * button): the follower re-reads what it missed from its cursors, and the
   * inbox and runs list are re-read.
   */
  reconnect(): void {
    const old = this.#follower;
    const cursors = this.runs.items.map((r) => [r.id, old?.last(r.id) ?? 0] as const);
    old?.stop();
    this.#reconnected = true;
    this.stream = 'connecting';
    this.#follow(true);
    for (const [id, last] of cursors) this.#follower?.track(id, last);
  }

  #follow(resync = false): void {
    const gen = ++this.#gen;
    this.#follower = followEvents(this.#api, {
      deliver: (runId, events) => this.deliver(runId, events),
      onSystem: (what) => this.onSystemChange?.(what),
      onStatus: (s) => {
        if (gen !== this.#gen) return;
        if (s === 'reconnecting' || s === 'closed') this.#reconnected = true;
        if (s === 'open' && this.#reconnected) {
          // What changed while the stream was down: the follower re-reads
          // tracked runs' events; the inbox and the list are re-read here.
          this.#reconnected = false;
          void this.approvals.load();
          void this.runs.load().then(() => this.#track());
        }
        this.stream = s;
      },
      onError: () => {},
      resync,
    });
  }

  stop(): void {
    this.#gen++;
    this.#follower?.stop();
    this.#follower = null;
  }

  /** In-order live events of one run (also the entry point for tests). */
  deliver(runId: string, events: RunEvent[]): void {
    this.runs.applyEvents(runId, events);
    this.approvals.applyEvents(events);
    this.#timelines.get(runId)?.apply(events);
  }

  /** The timeline of runId, loading it the first time it is asked for. */
  timeline(runId: string): TimelineState {
    let t = this.#timelines.get(runId);
    if (!t) {
      t = new TimelineState(this.#api, runId);
      this.#timelines.set(runId, t);
      void t.load();
    }
    return t;
  }

  go(v: View): void {
    this.view = v;
  }

  #track(): void {
    for (const r of this.runs.items) this.#follower?.track(r.id, r.lastSequence ?? 0);
  }
}
