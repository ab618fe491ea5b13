// One run's timeline: loads its events page by page through runs.events,
// then takes live events from the review state. Events that arrive while the
// history loads are kept and ordered by the reducer; a hole or a system.gap
// triggers a re-read from the last applied sequence.
//
// The timeline itself is a plain object, not a deep $state proxy: a run may
// hold 100,000 events, and proxying every row costs memory and time for no
// gain. The reducer replaces each row it changes with a new object, and
// `rev` counts applied batches: views read `rev` (or `data`, which reads it)
// and compare rows by identity to see what changed.
import { toApiError, type Api, type ApiError, type RunEvent } from '../api';
import { applyEvents, createTimeline, filled, skipHole, type Timeline } from '../timeline/model';
import { FIRST_PAGE, PAGE } from '../timeline/paging';

export { FIRST_PAGE, PAGE } from '../timeline/paging';

export class TimelineState {
  readonly runId: string;
  #data: Timeline = createTimeline();
  #rev = $state(0);
  status = $state<'loading' | 'ready' | 'error'>('loading');
  error = $state<ApiError | null>(null);

  #api: Pick<Api, 'runs'>;
  #filling = false;

  constructor(api: Pick<Api, 'runs'>, runId: string) {
    this.#api = api;
    this.runId = runId;
  }

  /** The timeline; reading it subscribes to every change (through rev). */
  get data(): Timeline {
    void this.#rev;
    return this.#data;
  }

  /** The timeline without subscribing (for callbacks outside rendering). */
  get raw(): Timeline {
    return this.#data;
  }

  /** Bumped after every batch of events applied: a number views can depend on. */
  get rev(): number {
    return this.#rev;
  }

  /** Reads every event after the last applied one. */
  async load(): Promise<void> {
    await this.#fill();
    if (!this.error) this.status = 'ready';
  }

  /** Applies live (or replayed) events; fills any hole they reveal. */
  apply(events: readonly RunEvent[]): void {
    const before = this.#data.last;
    const hole = applyEvents(this.#data, events);
    if (this.#data.last !== before) this.#rev++;
    if (hole && this.status !== 'loading') void this.#fill();
  }

  async #fill(): Promise<void> {
    if (this.#filling) return;
    this.#filling = true;
    try {
      // A live event may open a new hole while a page is in flight; go round
      // again (a few times at most) until none remains.
      for (let round = 0; round < 3; round++) {
        for (;;) {
          const before = this.#data.last;
          const size = before === 0 ? FIRST_PAGE : PAGE;
          const page = await this.#api.runs.events(this.runId, before, size);
          applyEvents(this.#data, page);
          filled(this.#data);
          if (this.#data.last !== before) this.#rev++;
          if (page.length < size || this.#data.last === before) break;
        }
        if (!this.#data.needsFill) break;
      }
      // Still a hole after re-reading: the server no longer has those events.
      if (this.#data.needsFill) {
        skipHole(this.#data);
        this.#rev++;
      }
      this.error = null;
    } catch (err) {
      this.error = toApiError(err);
      this.status = 'error';
    } finally {
      this.#filling = false;
    }
  }
}
