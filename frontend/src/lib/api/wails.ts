// The desktop transport: the Wails bindings of the app/api facades
// (`window.go.api.<Facade>.<Method>`) and the runtime's event bus. Bindings
// are looked up at call time, so the module works even if the Wails scripts
// finish initialising after this module loads.
import type { Api } from './contract';
import { ApiError, toApiError } from './error';
import type { RunEvent } from './types';

type Bound = (...args: unknown[]) => Promise<unknown>;

export interface WailsWindow {
  go?: { api?: Record<string, Record<string, Bound | undefined> | undefined> };
  runtime?: {
    EventsOn(name: string, cb: (...data: unknown[]) => void): (() => void) | void;
    EventsOff?(name: string): void;
  };
}

/** The Wails event that carries batches of run events (app/events.go). */
export const EVENTS_CHANNEL = 'agenthub:events';

/** The Wails event that says an open request waits (app/app.go OpenEvent). */
export const OPEN_CHANNEL = 'agenthub:open';

export function createWailsApi(win: WailsWindow): Api {
  async function call<T>(facade: string, method: string, ...args: unknown[]): Promise<T> {
    const fn = win.go?.api?.[facade]?.[method];
    if (typeof fn !== 'function') {
      throw new ApiError({
        code: 'internal_error',
        message: `the desktop binding ${facade}.${method} is missing`,
        next: 'Rebuild the app so that the frontend and the Go bindings match.',
      });
    }
    try {
      return (await fn(...args)) as T;
    } catch (err) {
      throw toApiError(err);
    }
  }

  return {
    transport: 'wails',
    system: {
      info: () => call('SystemAPI', 'Info'),
      localModels: async () => (await call<import('./types').LocalServer[] | null>('SystemAPI', 'LocalModels')) ?? [],
      takeOpen: async () => (await call<import('./types').OpenRequest | null>('SystemAPI', 'TakeOpen')) ?? {},
      onOpen(cb) {
        const off = win.runtime?.EventsOn(OPEN_CHANNEL, () => cb());
        return () => {
          if (typeof off === 'function') off();
          else win.runtime?.EventsOff?.(OPEN_CHANNEL);
        };
      },
    },
    workspaces: {
      list: async () => (await call<import('./types').Workspace[] | null>('WorkspacesAPI', 'List')) ?? [],
      add: (path) => call('WorkspacesAPI', 'Add', path),
      remove: async (id) => {
        await call('WorkspacesAPI', 'Remove', id);
      },
      pickDirectory: async () => (await call<string | null>('WorkspacesAPI', 'PickDirectory')) ?? '',
      policy: (id) => call('PolicyAPI', 'Get', id),
      revokeRule: (id, key) => call('PolicyAPI', 'Revoke', id, key),
    },
    settings: {
      get: () => call('SettingsAPI', 'Get'),
      set: (s) => call('SettingsAPI', 'Set', s),
    },
    runs: {
      list: async (workspaceId) => (await call<import('./types').RunSummary[] | null>('RunsAPI', 'List', workspaceId)) ?? [],
      start: (req) => call('RunsAPI', 'Start', req),
      get: (id) => call('RunsAPI', 'Get', id),
      events: async (id, after, limit) => (await call<RunEvent[] | null>('RunsAPI', 'Events', id, after, limit)) ?? [],
      cancel: (id) => call('RunsAPI', 'Cancel', id),
      resume: (id) => call('RunsAPI', 'Resume', id),
      profiles: async () => (await call<import('./types').ProfileInfo[] | null>('RunsAPI', 'Profiles')) ?? [],
      profileProblems: async () => (await call<import('./types').ProfileProblem[] | null>('RunsAPI', 'ProfileProblems')) ?? [],
    },
    approvals: {
      list: async () => (await call<import('./types').ApprovalRequest[] | null>('ApprovalsAPI', 'List')) ?? [],
      decide: (d) => call('ApprovalsAPI', 'Decide', d),
    },
    audit: {
      list: async (f) => (await call<import('./types').AuditEntry[] | null>('AuditAPI', 'List', f)) ?? [],
      verify: () => call('AuditAPI', 'Verify'),
      export: (f) => call('AuditFileAPI', 'Save', f ?? {}),
    },
    history: {
      search: async (r) => (await call<import('./history').SearchResult[] | null>('SearchAPI', 'Search', r)) ?? [],
      exportRun: (id) => call('RunFileAPI', 'Save', id),
      runsPage: (r) => call('SearchAPI', 'RunsPage', r),
    },
    worktrees: {
      get: (id) => call('WorktreesAPI', 'Get', id),
      mergePlan: (id) => call('WorktreesAPI', 'MergePlan', id),
      merge: (id, req) => call('WorktreesAPI', 'Merge', id, req),
      keep: (id) => call('WorktreesAPI', 'Keep', id),
      discard: (id, confirm) => call('WorktreesAPI', 'Discard', id, confirm),
      planPush: (id, remote) => call('WorktreesAPI', 'PlanPush', id, remote),
      push: (id, plan) => call('WorktreesAPI', 'Push', id, plan),
    },
    changes: {
      get: (id) => call('ChangesAPI', 'Get', id),
      comment: (id, c) => call('ChangesAPI', 'Comment', { ...c, runId: id }),
      revert: (id, checkpointId) => call('ChangesAPI', 'Revert', id, checkpointId),
    },
    conflicts: {
      resolve: (id, intent, choice) => call('ConflictsAPI', 'Resolve', id, intent, choice),
    },
    artifacts: {
      list: async (q) => (await call<import('./artifacts').Artifact[] | null>('ArtifactsAPI', 'List', q)) ?? [],
      get: (id) => call('ArtifactsAPI', 'Get', id),
      review: (id) => call('ArtifactsAPI', 'Review', id),
    },
    events: {
      subscribe(h) {
        const rt = win.runtime;
        if (!rt) {
          h.onError?.(new ApiError({ code: 'internal_error', message: 'the Wails runtime is missing' }));
          return () => {};
        }
        const off = rt.EventsOn(EVENTS_CHANNEL, (batch) => {
          if (Array.isArray(batch) && batch.length > 0) h.onEvents(batch as RunEvent[]);
        });
        h.onStatus?.('open');
        return () => {
          if (typeof off === 'function') off();
          else rt.EventsOff?.(EVENTS_CHANNEL);
          h.onStatus?.('closed');
        };
      },
    },
  };
}
