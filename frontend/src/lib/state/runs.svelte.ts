// The runs of every workspace, newest first, kept current by live events:
// each event moves its run's state, last-event time and pending-approval
// count, so the sidebar needs no polling. A run first seen in the stream
// (started from the CLI or another window) is fetched once.
import { COARSE, TERMINAL_EVENTS, toApiError, type Api, type ApiError, type EventType, type RunEvent, type RunState, type RunSummary, type StartRunRequest } from '../api';

export class RunsState {
  items = $state<RunSummary[]>([]);
  status = $state<'loading' | 'ready' | 'error'>('loading');
  error = $state<ApiError | null>(null);

  #api: Pick<Api, 'runs'>;
  #fetching = new Set<string>();

  constructor(api: Pick<Api, 'runs'>) {
    this.#api = api;
  }

  get(id: string): RunSummary | undefined {
    return this.items.find((r) => r.id === id);
  }

  forWorkspace(workspaceId: string): RunSummary[] {
    return this.items.filter((r) => r.workspaceId === workspaceId);
  }

  async load(): Promise<void> {
    try {
      const list = await this.#api.runs.list('');
      this.items = list;
      this.error = null;
      this.status = 'ready';
    } catch (err) {
      this.error = toApiError(err);
      this.status = 'error';
    }
  }

  async start(req: StartRunRequest): Promise<RunSummary> {
    let run: RunSummary;
    try {
      run = await this.#api.runs.start(req);
    } catch (err) {
      throw toApiError(err);
    }
    // Live events may already have brought a newer copy of this run.
    if (!this.get(run.id)) this.#upsert(run);
    return this.get(run.id)!;
  }

  async cancel(id: string): Promise<void> {
    try {
      this.#upsert(await this.#api.runs.cancel(id));
    } catch (err) {
      throw toApiError(err);
    }
  }

  /** Re-reads one run (e.g. its failure details once it ended). */
  async refresh(id: string): Promise<void> {
    if (this.#fetching.has(id)) return;
    this.#fetching.add(id);
    try {
      this.#upsert(await this.#api.runs.get(id));
    } catch {
      // the next event or reload tries again; the list keeps what it had
    } finally {
      this.#fetching.delete(id);
    }
  }

  /** Folds a run's in-order events into its summary. */
  applyEvents(runId: string, events: readonly RunEvent[]): void {
    const run = this.get(runId);
    if (!run) {
      void this.refresh(runId);
      return;
    }
    let ended = false;
    for (const ev of events) {
      if ((run.lastSequence ?? 0) >= ev.sequence) continue;
      run.lastSequence = ev.sequence;
      run.lastEventAt = ev.timestamp;
      const p = (ev.payload ?? {}) as Record<string, unknown>;
      const end = TERMINAL_EVENTS[ev.type as EventType];
      if (ev.type === 'run.status.changed' || ev.type === 'run.started') {
        if (typeof p.to === 'string') run.state = p.to as RunState;
      } else if (end) {
        run.state = end;
        run.doneReason = typeof p.doneReason === 'string' ? p.doneReason : run.doneReason;
        ended = true;
      } else if (ev.type === 'run.approval.requested') {
        run.pendingApprovals += 1;
      } else if (ev.type === 'run.approval.resolved') {
        run.pendingApprovals = Math.max(0, run.pendingApprovals - 1);
      }
      run.coarse = COARSE[run.state] ?? 'created';
      run.queued = false;
    }
    if (ended) void this.refresh(runId);
  }

  #upsert(run: RunSummary): void {
    const i = this.items.findIndex((r) => r.id === run.id);
    if (i < 0) {
      this.items = [run, ...this.items].sort((a, b) => (b.createdAt ?? '').localeCompare(a.createdAt ?? ''));
      return;
    }
    const cur = this.items[i]!;
    // Never move a run backwards: keep the copy that has seen more events.
    if ((cur.lastSequence ?? 0) > (run.lastSequence ?? 0)) return;
    this.items[i] = run;
  }
}
