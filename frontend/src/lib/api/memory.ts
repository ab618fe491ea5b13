// An in-memory Api: the same contract with no Go behind it. Unit tests inject
// it instead of a transport (no mock framework), and it records calls so a
// test can assert what the UI asked for.
import type { Api } from './contract';
import { ApiError } from './error';
import { DEFAULT_GATE } from './generated';
import type {
  ApprovalRequest,
  AuditEntry,
  AuditVerify,
  Info,
  LocalServer,
  PolicyView,
  ProfileInfo,
  RunEvent,
  RunSummary,
  Settings,
  Workspace,
} from './types';

/** The bundled profile every AgentHub has. */
export const DEMO_PROFILE: ProfileInfo = { name: 'demo', runtime: 'script', scripted: true, default: true };

/** The default gate rows as the Go side computes them (generated from app/api/policy.go). */
export { DEFAULT_GATE };

export interface MemoryApiOptions {
  workspaces?: Workspace[];
  settings?: Settings;
  info?: Info;
  /** What SystemAPI.localModels finds; default: nothing. */
  localServers?: LocalServer[];
  /** Present => window mode with a native dialog answering this path. */
  pickDirectory?: () => Promise<string>;
  /** Per-method failures: the next call of that method rejects with it. */
  failures?: Partial<Record<string, ApiError>>;
  runs?: RunSummary[];
  approvals?: ApprovalRequest[];
  /** Default: the demo profile alone. */
  profiles?: ProfileInfo[];
  /** Broken profile files (RunsAPI.ProfileProblems); default none. Tests may change it between calls. */
  profileProblems?: import('./types').ProfileProblem[];
  /** Policies by workspace id; others have the default gate alone. */
  policies?: Record<string, Omit<PolicyView, 'workspaceId' | 'file' | 'defaults'>>;
  audit?: AuditEntry[];
  /** Default: a chain that verifies, headed by the last entry's hash. */
  auditVerify?: AuditVerify;
}

export interface MemoryApi extends Api {
  calls: { method: string; args: unknown[] }[];
  fail(method: string, err: ApiError): void;
  emit(batch: RunEvent[]): void;
  events_: Map<string, RunEvent[]>;
  runs_: RunSummary[];
  approvals_: ApprovalRequest[];
  audit_: AuditEntry[];
}

export function createMemoryApi(o: MemoryApiOptions = {}): MemoryApi {
  let workspaces = [...(o.workspaces ?? [])];
  let settings: Settings = o.settings ?? { theme: 'system', language: 'en' };
  const failures = new Map(Object.entries(o.failures ?? {}));
  const calls: MemoryApi['calls'] = [];
  const listeners = new Set<(b: RunEvent[]) => void>();
  const events = new Map<string, RunEvent[]>();
  const runs: RunSummary[] = [...(o.runs ?? [])];
  const approvals: ApprovalRequest[] = [...(o.approvals ?? [])];
  const audit: AuditEntry[] = [...(o.audit ?? [])];
  const verify = (): AuditVerify => o.auditVerify ?? { ok: true, head: audit.at(-1)?.hash ?? '' };
  let n = 0;
  const findRun = (id: string) => {
    const r = runs.find((x) => x.id === id);
    if (!r) throw new ApiError({ code: 'not_found', message: 'no such run' });
    return r;
  };

  async function rec<T>(method: string, args: unknown[], fn: () => T | Promise<T>): Promise<T> {
    calls.push({ method, args });
    await Promise.resolve();
    const err = failures.get(method);
    if (err) {
      failures.delete(method);
      throw err;
    }
    return await fn();
  }

  const api: MemoryApi = {
    transport: o.pickDirectory ? 'wails' : 'http',
    calls,
    events_: events,
    runs_: runs,
    approvals_: approvals,
    audit_: audit,
    fail: (method, err) => failures.set(method, err),
    emit: (batch) => listeners.forEach((l) => l(batch)),
    system: {
      info: () => rec('system.info', [], () => o.info ?? { version: 'test', home: '~/.local/share/agenthub', mode: 'browser' }),
      localModels: () =>
        rec('system.localModels', [], () => (o.localServers ?? []).map((s) => ({ ...s, models: [...s.models] }))),
    },
    workspaces: {
      list: () => rec('workspaces.list', [], () => [...workspaces]),
      add: (path) =>
        rec('workspaces.add', [path], () => {
          // As the store: a folder already on the allowlist is workspace_exists.
          if (workspaces.some((w) => w.displayPath === path)) {
            throw new ApiError({ code: 'workspace_exists', message: `workspace ${path} is already in the allowlist` });
          }
          const ws: Workspace = {
            id: `ws_${++n}`,
            name: path.split('/').filter(Boolean).pop() ?? path,
            displayPath: path,
            addedAt: '2026-01-02T03:04:05.000Z',
          };
          workspaces = [...workspaces, ws];
          return ws;
        }),
      remove: (id) =>
        rec('workspaces.remove', [id], () => {
          if (!workspaces.some((w) => w.id === id)) throw new ApiError({ code: 'not_found', message: 'no such item' });
          workspaces = workspaces.filter((w) => w.id !== id);
        }),
      pickDirectory: o.pickDirectory ? () => rec('workspaces.pickDirectory', [], o.pickDirectory!) : undefined,
      policy: (id) =>
        rec('workspaces.policy', [id], () => {
          if (!workspaces.some((w) => w.id === id)) throw new ApiError({ code: 'not_found', message: 'no such item' });
          const p = o.policies?.[id] ?? { source: 'default' as const, rules: [] };
          return { workspaceId: id, file: '.agenthub/policy.toml', defaults: DEFAULT_GATE.map((r) => ({ ...r })), ...p };
        }),
      revokeRule: (id, key) =>
        rec('workspaces.revokeRule', [id, key], () => {
          // As PolicyAPI.Revoke: only a key listed for this workspace revokes.
          const p = o.policies?.[id];
          const rules = p?.rules ?? [];
          if (!rules.some((r) => r.key === key)) throw new ApiError({ code: 'not_found', message: 'this workspace has no such rule' });
          const left = rules.filter((r) => r.key !== key);
          o.policies![id] = { ...p!, rules: left, source: left.length > 0 ? 'file' : 'default' };
          return { workspaceId: id, file: '.agenthub/policy.toml', defaults: DEFAULT_GATE.map((r) => ({ ...r })), ...o.policies![id]! };
        }),
    },
    settings: {
      get: () => rec('settings.get', [], () => ({ ...settings })),
      // As SettingsAPI.Set: a ruleLocation left out keeps the current one.
      set: (s) => rec('settings.set', [s], () => (settings = { ...s, ruleLocation: s.ruleLocation ?? settings.ruleLocation })),
    },
    runs: {
      list: (workspaceId) => rec('runs.list', [workspaceId], () => runs.filter((r) => !workspaceId || r.workspaceId === workspaceId).map((r) => ({ ...r }))),
      start: (req) =>
        rec('runs.start', [req], () => {
          const run: RunSummary = {
            id: `run_${++n}`,
            sessionId: `ses_${n}`,
            workspaceId: req.workspaceId,
            profile: req.profile || 'demo',
            task: req.task,
            state: 'Accepted',
            coarse: 'created',
            createdAt: '2026-01-02T03:04:05.000Z',
            lastEventAt: '2026-01-02T03:04:05.000Z',
            lastSequence: 0,
            pendingApprovals: 0,
            scripted: true,
          };
          runs.unshift(run);
          return { ...run };
        }),
      get: (id) => rec('runs.get', [id], () => ({ ...findRun(id) })),
      events: (id, after, limit) =>
        rec('runs.events', [id, after, limit], () =>
          (events.get(id) ?? []).filter((e) => e.sequence > after).slice(0, limit),
        ),
      cancel: (id) =>
        rec('runs.cancel', [id], () => {
          const r = findRun(id);
          Object.assign(r, { state: 'Cancelled', coarse: 'done', doneReason: 'user_cancelled' });
          return { ...r };
        }),
      resume: (id) =>
        rec('runs.resume', [id], () => {
          const r = findRun(id);
          if (r.state !== 'Failed' || r.failure?.code !== 'run_interrupted' || r.resumable === false) {
            throw new ApiError({ code: 'invalid_input', message: `run ${id} was not interrupted` });
          }
          const run: RunSummary = {
            ...r,
            id: `run_${++n}`,
            state: 'Accepted',
            coarse: 'created',
            failure: undefined,
            resumable: false,
            lastSequence: 0,
            pendingApprovals: 0,
          };
          runs.unshift(run);
          return { ...run };
        }),
      profiles: () => rec('runs.profiles', [], () => (o.profiles ?? [DEMO_PROFILE]).map((p) => ({ ...p }))),
      profileProblems: () => rec('runs.profileProblems', [], () => (o.profileProblems ?? []).map((p) => ({ ...p }))),
    },
    approvals: {
      list: () => rec('approvals.list', [], () => approvals.filter((a) => a.status === 'pending')),
      decide: (d) =>
        rec('approvals.decide', [d], () => {
          const a = approvals.find((x) => x.approvalId === d.approvalId);
          if (!a) throw new ApiError({ code: 'not_found', message: 'no such approval' });
          if (a.status !== 'pending') throw new ApiError({ code: 'approval_already_resolved', message: 'already decided' });
          if (a.subjectHash !== d.subjectHash) throw new ApiError({ code: 'approval_stale', message: 'the subject changed' });
          a.status = 'resolved';
          return { outcome: 'accepted' };
        }),
    },
    audit: {
      list: (f) =>
        rec('audit.list', [f], () =>
          audit.filter(
            (e) => (!f.runId || e.runId === f.runId) && (!f.actor || e.actor === f.actor) && (!f.kind || e.kind === f.kind),
          ),
        ),
      verify: () => rec('audit.verify', [], verify),
      export: (f) =>
        rec('audit.export', f ? [f] : [], () => {
          const v = verify();
          const active = !!f && Object.values(f).some(Boolean);
          const n = active
            ? audit.filter(
                (e) =>
                  (!f.runId || e.runId === f.runId) &&
                  (!f.actor || e.actor === f.actor) &&
                  (!f.kind || e.kind === f.kind) &&
                  (!f.from || e.at >= f.from) &&
                  (!f.to || e.at < f.to),
              ).length
            : audit.length;
          const out = { saved: true, file: 'agenthub-audit.jsonl', entries: n, verified: v.ok, head: v.head };
          return active ? { ...out, filtered: true, total: audit.length } : out;
        }),
    },
    events: {
      subscribe(h) {
        listeners.add(h.onEvents);
        return () => listeners.delete(h.onEvents);
      },
    },
  };
  return api;
}
