// Pending approvals across every run (the inbox), kept current by live
// events, and the reviewer's decisions. Which approval the dialog shows is
// UI state and lives here too, so the inbox, the timeline and the automatic
// opening agree on it. Dismissing never decides anything.
import { TERMINAL_EVENTS, toApiError, type Api, type ApiError, type ApprovalRequest, type Decision, type EventType, type RunEvent } from '../api';

export class ApprovalsState {
  pending = $state<ApprovalRequest[]>([]);
  status = $state<'loading' | 'ready' | 'error'>('loading');
  error = $state<ApiError | null>(null);
  /** The approval shown in the dialog, if any. */
  openId = $state<string | null>(null);
  /** Approvals the reviewer closed without deciding: not reopened by themselves. */
  dismissed = $state<string[]>([]);

  #api: Pick<Api, 'approvals'>;

  constructor(api: Pick<Api, 'approvals'>) {
    this.#api = api;
  }

  get open(): ApprovalRequest | null {
    return this.pending.find((a) => a.approvalId === this.openId) ?? null;
  }

  forRun(runId: string): ApprovalRequest[] {
    return this.pending.filter((a) => a.runId === runId);
  }

  async load(): Promise<void> {
    try {
      this.pending = await this.#api.approvals.list();
      this.error = null;
      this.status = 'ready';
    } catch (err) {
      this.error = toApiError(err);
      this.status = 'error';
    }
    if (this.openId && !this.open) this.openId = null;
  }

  applyEvents(events: readonly RunEvent[]): void {
    for (const ev of events) {
      if (ev.type === 'run.approval.requested') {
        const req = ev.payload as ApprovalRequest;
        if (this.pending.some((a) => a.approvalId === req.approvalId || a.mergedApprovalIds?.includes(req.approvalId))) continue;
        // A request equal to one already waiting in the same run is the
        // same item: one decision answers both (the server merges them too).
        const twin = this.pending.find((a) => a.runId === req.runId && a.subjectHash === req.subjectHash);
        if (twin) twin.mergedApprovalIds = [...(twin.mergedApprovalIds ?? []), req.approvalId];
        else this.pending.push(req);
      } else if (ev.type === 'run.approval.resolved') {
        this.#drop((ev.payload as { approvalId?: string }).approvalId ?? '');
      } else if (TERMINAL_EVENTS[ev.type as EventType]) {
        for (const a of this.forRun(ev.runId)) this.#drop(a.approvalId);
      }
    }
  }

  show(approvalId: string): void {
    this.openId = approvalId;
    this.dismissed = this.dismissed.filter((id) => id !== approvalId);
  }

  /** Closes the dialog without a decision. */
  dismiss(): void {
    if (this.openId && !this.dismissed.includes(this.openId)) this.dismissed.push(this.openId);
    this.openId = null;
  }

  /**
   * Sends a decision. On success the approval leaves the inbox (its
   * run.approval.resolved event will say the same). A stale or already
   * resolved approval reloads the list; the error is rethrown for the dialog.
   */
  async decide(d: Decision): Promise<void> {
    try {
      await this.#api.approvals.decide(d);
    } catch (err) {
      const e = toApiError(err);
      if (e.code === 'approval_already_resolved') {
        this.#drop(d.approvalId);
        return;
      }
      if (e.code === 'approval_stale' || e.code === 'not_found') void this.load();
      throw e;
    }
    this.#drop(d.approvalId);
  }

  #drop(approvalId: string): void {
    this.pending = this.pending.filter((a) => a.approvalId !== approvalId);
    if (this.openId === approvalId) this.openId = null;
  }
}
