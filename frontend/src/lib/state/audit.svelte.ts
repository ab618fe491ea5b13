// The audit view's state: the whole hash chain with its verify outcome, the
// filters (workspace, run, actor, action, time) and the export. The list is
// read whole and filtered here, so the filter choices always offer every
// value the chain holds; AuditAPI.List reads the whole chain either way.
import { toApiError, type Api, type ApiError, type AuditEntry, type AuditExport, type AuditFilter, type AuditVerify } from '../api';

export interface AuditFilters {
  workspaceId: string;
  runId: string;
  actor: string;
  kind: string;
  /** Inclusive bounds as `datetime-local` values (local time), or "". */
  from: string;
  to: string;
}

export const NO_FILTERS: AuditFilters = { workspaceId: '', runId: '', actor: '', kind: '', from: '', to: '' };

/** How many entries the list shows at first, and adds per "show more". */
export const PAGE = 200;

/** The workspace an entry belongs to: its own, or its run's. */
export function entryWorkspace(e: AuditEntry, runWorkspace: (runId: string) => string | undefined): string | undefined {
  const own = e.data?.workspaceId;
  if (typeof own === 'string' && own) return own;
  return e.runId ? runWorkspace(e.runId) : undefined;
}

/** A `datetime-local` value as epoch ms (local time); NaN when empty or invalid. */
export function localTime(v: string): number {
  return v ? new Date(v).getTime() : NaN;
}

/**
 * The view's filters as the export takes them: the same entries the list
 * shows (times in UTC, a bound without seconds covering its whole minute,
 * the upper one exclusive); undefined when nothing is filtered.
 */
export function exportFilter(f: AuditFilters): AuditFilter | undefined {
  const out: AuditFilter = {};
  if (f.runId) out.runId = f.runId;
  if (f.actor) out.actor = f.actor;
  if (f.kind) out.kind = f.kind;
  if (f.workspaceId) out.workspaceId = f.workspaceId;
  const from = localTime(f.from);
  if (!Number.isNaN(from)) out.from = new Date(from).toISOString();
  const to = localTime(f.to);
  if (!Number.isNaN(to)) out.to = new Date(to + (f.to.length === 16 ? 60_000 : 1)).toISOString();
  return Object.keys(out).length ? out : undefined;
}

/** The entries that pass every filter, newest first. */
export function filterEntries(
  entries: readonly AuditEntry[],
  f: AuditFilters,
  runWorkspace: (runId: string) => string | undefined,
): AuditEntry[] {
  const from = localTime(f.from);
  // A bound without seconds covers its whole minute.
  const to = localTime(f.to) + (f.to.length === 16 ? 59_999 : 0);
  const out: AuditEntry[] = [];
  for (let i = entries.length - 1; i >= 0; i--) {
    const e = entries[i]!;
    if (f.runId && e.runId !== f.runId) continue;
    if (f.actor && e.actor !== f.actor) continue;
    if (f.kind && e.kind !== f.kind) continue;
    if (f.workspaceId && entryWorkspace(e, runWorkspace) !== f.workspaceId) continue;
    const at = Date.parse(e.at);
    if (!Number.isNaN(from) && !(at >= from)) continue;
    if (!Number.isNaN(to) && !(at <= to)) continue;
    out.push(e);
  }
  return out;
}

/** Distinct values of one field, sorted, for a filter's choices. */
export function distinct(entries: readonly AuditEntry[], pick: (e: AuditEntry) => string | undefined): string[] {
  const set = new Set<string>();
  for (const e of entries) {
    const v = pick(e);
    if (v) set.add(v);
  }
  return [...set].sort();
}

export class AuditState {
  entries = $state<AuditEntry[]>([]);
  verify = $state<AuditVerify | null>(null);
  status = $state<'loading' | 'ready' | 'error'>('loading');
  error = $state<ApiError | null>(null);
  verifying = $state(false);
  verifyError = $state<ApiError | null>(null);
  exporting = $state(false);
  exported = $state<AuditExport | null>(null);
  exportError = $state<ApiError | null>(null);
  filters = $state<AuditFilters>({ ...NO_FILTERS });
  shown = $state(PAGE);

  #api: Pick<Api, 'audit'>;

  constructor(api: Pick<Api, 'audit'>, initial: Partial<AuditFilters> = {}) {
    this.#api = api;
    this.filters = { ...NO_FILTERS, ...initial };
  }

  /** Reads the chain and verifies it. */
  async load(): Promise<void> {
    if (this.status !== 'ready') this.status = 'loading';
    try {
      this.entries = await this.#api.audit.list({});
      this.error = null;
      this.status = 'ready';
    } catch (err) {
      this.error = toApiError(err);
      this.status = 'error';
      return;
    }
    await this.runVerify();
  }

  async runVerify(): Promise<void> {
    this.verifying = true;
    try {
      this.verify = await this.#api.audit.verify();
      this.verifyError = null;
    } catch (err) {
      this.verifyError = toApiError(err);
    } finally {
      this.verifying = false;
    }
  }

  async export(): Promise<void> {
    this.exporting = true;
    this.exportError = null;
    this.exported = null;
    try {
      this.exported = await this.#api.audit.export(exportFilter(this.filters));
    } catch (err) {
      this.exportError = toApiError(err);
    } finally {
      this.exporting = false;
    }
  }

  setFilter<K extends keyof AuditFilters>(key: K, value: AuditFilters[K]): void {
    this.filters = { ...this.filters, [key]: value };
    this.shown = PAGE;
  }

  clearFilters(): void {
    this.filters = { ...NO_FILTERS };
    this.shown = PAGE;
  }

  showMore(): void {
    this.shown += PAGE;
  }

  /** True when the entry is at or after the first broken link of the chain. */
  broken(e: AuditEntry): boolean {
    const b = this.verify && !this.verify.ok ? this.verify.brokenSeq : undefined;
    return b !== undefined && e.seq >= b;
  }
}
