// The browser transport: JSON over HTTP for calls, SSE for live events
// (docs/API.md). Authentication: the session cookie set by `GET /?token=T`
// plus `Authorization: Bearer T` with the token kept in memory.
import type { Api } from './contract';
import { ApiError, CLIENT_CODES, codeForStatus, toApiError } from './error';
import { openStream } from './sse';
import type { LocalServer, RunEvent } from './types';

export interface HttpOptions {
  /** Origin and path prefix; "" means the page's own origin. */
  baseUrl?: string;
  token?: string;
  fetch?: typeof fetch;
  /** Test hook: delay before SSE reconnect attempt n. */
  backoff?(attempt: number): number;
  /** Hands a downloaded file to the user; the default saves it through the page. */
  download?(name: string, body: Blob): void;
}

/** Saves body as a file through a temporary link, as a browser download. */
export function browserDownload(name: string, body: Blob): void {
  const url = URL.createObjectURL(body);
  const a = document.createElement('a');
  a.href = url;
  a.download = name;
  a.rel = 'noopener';
  a.style.display = 'none';
  document.body.append(a);
  a.click();
  a.remove();
  setTimeout(() => URL.revokeObjectURL(url), 0);
}

/** The filename of a Content-Disposition header, or fallback. */
export function dispositionName(header: string | null, fallback: string): string {
  const m = /filename="?([^";]+)"?/i.exec(header ?? '');
  const name = m?.[1]?.trim() ?? '';
  // Only a plain base name is used: never a path the server might send.
  return name && !/[\\/]/.test(name) ? name : fallback;
}

/** Reads the export's last line ({chainHead, entries, verified, filter?, total?}). */
function exportSummary(text: string): { entries: number; verified: boolean; head: string; filtered?: boolean; total?: number } {
  const last = text.trimEnd().split('\n').at(-1) ?? '';
  try {
    const v = JSON.parse(last) as { chainHead?: unknown; entries?: unknown; verified?: unknown; filter?: unknown; total?: unknown };
    if (typeof v.entries === 'number' && typeof v.verified === 'boolean') {
      const head = typeof v.chainHead === 'string' ? v.chainHead : '';
      if (v.filter && typeof v.total === 'number') return { entries: v.entries, verified: v.verified, head, filtered: true, total: v.total };
      return { entries: v.entries, verified: v.verified, head };
    }
  } catch {
    // fall through
  }
  throw new ApiError({ code: CLIENT_CODES.badResponse, message: 'the audit export has no summary line' });
}

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

const hasCode = (v: unknown): boolean =>
  typeof v === 'object' && v !== null && typeof (v as { code?: unknown }).code === 'string';

function parseJSON(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** The ApiError of a response that is not ok: its body's, else one by status. */
function failure(res: Response, parsed: unknown): ApiError {
  if (hasCode(parsed)) return new ApiError(toApiError(parsed), res.status);
  return new ApiError({ code: codeForStatus(res.status), message: '' }, res.status);
}

export function createHttpApi(opts: HttpOptions = {}): Api {
  const base = opts.baseUrl ?? '';
  const doFetch = opts.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const auth: Record<string, string> = opts.token ? { Authorization: `Bearer ${opts.token}` } : {};

  async function send(method: Method, path: string, accept: string, body?: unknown): Promise<Response> {
    const headers: Record<string, string> = { ...auth, Accept: accept };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    try {
      return await doFetch(base + path, {
        method,
        headers,
        credentials: 'same-origin',
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch {
      throw new ApiError({ code: CLIENT_CODES.unreachable, message: 'the AgentHub server did not answer' });
    }
  }

  async function request<T>(method: Method, path: string, body?: unknown): Promise<T> {
    const res = await send(method, path, 'application/json', body);
    const text = await res.text();
    const parsed = parseJSON(text);
    if (!res.ok) throw failure(res, parsed);
    if (text !== '' && parsed === undefined) {
      throw new ApiError({ code: CLIENT_CODES.badResponse, message: 'the server answered with something other than JSON' }, res.status);
    }
    return parsed as T;
  }

  const q = (params: Record<string, string | number | undefined>) => {
    const s = new URLSearchParams();
    for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== '') s.set(k, String(v));
    const str = s.toString();
    return str ? `?${str}` : '';
  };
  const id = encodeURIComponent;

  return {
    transport: 'http',
    system: {
      info: () => request('GET', '/api/info'),
      localModels: async () => (await request<LocalServer[] | null>('GET', '/api/local-models')) ?? [],
    },
    workspaces: {
      list: () => request('GET', '/api/workspaces'),
      add: (path) => request('POST', '/api/workspaces', { path }),
      remove: async (wid) => {
        await request('DELETE', `/api/workspaces/${id(wid)}`);
      },
      // No pickDirectory: a browser cannot open the native dialog.
      policy: (wid) => request('GET', `/api/workspaces/${id(wid)}/policy`),
      revokeRule: (wid, key) => request('DELETE', `/api/workspaces/${id(wid)}/policy/rules/${id(key)}`),
    },
    settings: {
      get: () => request('GET', '/api/settings'),
      set: (s) => request('PUT', '/api/settings', s),
    },
    runs: {
      list: (workspaceId) => request('GET', `/api/runs${q({ workspaceId })}`),
      start: (req) => request('POST', '/api/runs', req),
      get: (rid) => request('GET', `/api/runs/${id(rid)}`),
      events: (rid, after, limit) => request('GET', `/api/runs/${id(rid)}/events${q({ after, limit })}`),
      cancel: (rid) => request('POST', `/api/runs/${id(rid)}/cancel`),
      resume: (rid) => request('POST', `/api/runs/${id(rid)}/resume`),
      profiles: () => request('GET', '/api/profiles'),
      profileProblems: () => request('GET', '/api/profiles/problems'),
    },
    approvals: {
      list: () => request('GET', '/api/approvals'),
      decide: (d) => request('POST', `/api/approvals/${id(d.approvalId)}/decide`, d),
    },
    audit: {
      list: (f) => request('GET', `/api/audit${q({ runId: f.runId, actor: f.actor, kind: f.kind })}`),
      verify: () => request('GET', '/api/audit/verify'),
      async export(f) {
        const res = await send(
          'GET',
          `/api/audit/export${q({ runId: f?.runId, actor: f?.actor, kind: f?.kind, workspaceId: f?.workspaceId, from: f?.from, to: f?.to })}`,
          'application/x-ndjson, application/json',
        );
        const text = await res.text();
        if (!res.ok) throw failure(res, parseJSON(text));
        const summary = exportSummary(text);
        const file = dispositionName(res.headers.get('Content-Disposition'), 'agenthub-audit.jsonl');
        (opts.download ?? browserDownload)(file, new Blob([text], { type: 'application/x-ndjson' }));
        return { saved: true, file, ...summary };
      },
    },
    history: {
      search: async (r) =>
        (await request<import('./history').SearchResult[] | null>(
          'GET',
          `/api/search${q({
            q: r.query,
            workspace: r.workspace,
            status: r.status?.join(','),
            runtime: r.runtime,
            from: r.from,
            to: r.to,
            needsApproval: r.needsApproval ? 'true' : undefined,
            changedFile: r.changedFile,
            runId: r.runId,
            limit: r.limit,
          })}`,
        )) ?? [],
      runsPage: (r) =>
        request('GET', `/api/runs/page${q({ workspace: r.workspace, status: r.status?.join(','), before: r.before, limit: r.limit })}`),
      async exportRun(rid) {
        const res = await send('GET', `/api/runs/${id(rid)}/export`, 'application/zip, application/json');
        if (!res.ok) throw failure(res, parseJSON(await res.text()));
        const body = await res.blob();
        const file = dispositionName(res.headers.get('Content-Disposition'), `agenthub-${rid}.zip`);
        (opts.download ?? browserDownload)(file, body);
        return { saved: true, file, events: 0 };
      },
    },
    worktrees: {
      get: (rid) => request('GET', `/api/runs/${id(rid)}/worktree`),
      mergePlan: (rid) => request('GET', `/api/runs/${id(rid)}/worktree/merge`),
      merge: (rid, req) => request('POST', `/api/runs/${id(rid)}/worktree/merge`, req),
      keep: (rid) => request('POST', `/api/runs/${id(rid)}/worktree/keep`),
      discard: (rid, confirm) => request('POST', `/api/runs/${id(rid)}/worktree/discard`, { confirm }),
      planPush: (rid, remote) => request('GET', `/api/runs/${id(rid)}/worktree/push${q({ remote })}`),
      push: (rid, plan) => request('POST', `/api/runs/${id(rid)}/worktree/push`, plan),
    },
    changes: {
      get: (rid) => request('GET', `/api/runs/${id(rid)}/changes`),
      comment: (rid, c) => request('POST', `/api/runs/${id(rid)}/comments`, c),
      revert: (rid, checkpointId) => request('POST', `/api/runs/${id(rid)}/revert`, { checkpointId }),
    },
    conflicts: {
      resolve: (rid, intent, choice) => request('POST', `/api/runs/${id(rid)}/conflicts/${id(intent)}/resolve`, { choice }),
    },
    artifacts: {
      list: async (a) =>
        (await request<import('./artifacts').Artifact[] | null>(
          'GET',
          `/api/artifacts${q({ runId: a.runId, workspaceId: a.workspaceId, kind: a.kind, from: a.from, to: a.to, limit: a.limit })}`,
        )) ?? [],
      get: (aid) => request('GET', `/api/artifacts/${id(aid)}`),
      review: (aid) => request('POST', `/api/artifacts/${id(aid)}/review`),
    },
    events: {
      subscribe(h) {
        return openStream({
          url: `${base}/api/stream`,
          fetch: doFetch,
          headers: auth,
          backoff: opts.backoff,
          onStatus: h.onStatus,
          onError: h.onError,
          onMessages(batch) {
            const events: RunEvent[] = [];
            for (const m of batch) {
              if (m.event !== 'message') continue;
              try {
                events.push(JSON.parse(m.data) as RunEvent);
              } catch {
                console.warn('dropped an event that is not JSON', m.id);
              }
            }
            if (events.length > 0) h.onEvents(events);
          },
        });
      },
    },
  };
}
