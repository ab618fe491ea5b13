// The browser transport: JSON over HTTP for calls, SSE for live events
// (docs/API.md). Authentication: the session cookie set by `GET /?token=T`
// plus `Authorization: Bearer T` with the token kept in memory.
import type { Api } from './contract';
import { ApiError, CLIENT_CODES, codeForStatus, toApiError } from './error';
import { openStream } from './sse';
import type { RunEvent } from './types';

export interface HttpOptions {
  /** Origin and path prefix; "" means the page's own origin. */
  baseUrl?: string;
  token?: string;
  fetch?: typeof fetch;
  /** Test hook: delay before SSE reconnect attempt n. */
  backoff?(attempt: number): number;
}

type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

const hasCode = (v: unknown): boolean =>
  typeof v === 'object' && v !== null && typeof (v as { code?: unknown }).code === 'string';

export function createHttpApi(opts: HttpOptions = {}): Api {
  const base = opts.baseUrl ?? '';
  const doFetch = opts.fetch ?? ((input, init) => globalThis.fetch(input, init));
  const auth: Record<string, string> = opts.token ? { Authorization: `Bearer ${opts.token}` } : {};

  async function request<T>(method: Method, path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = { ...auth, Accept: 'application/json' };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    let res: Response;
    try {
      res = await doFetch(base + path, {
        method,
        headers,
        credentials: 'same-origin',
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch {
      throw new ApiError({ code: CLIENT_CODES.unreachable, message: 'the AgentHub server did not answer' });
    }
    const text = await res.text();
    let parsed: unknown = undefined;
    if (text !== '') {
      try {
        parsed = JSON.parse(text);
      } catch {
        parsed = undefined;
      }
    }
    if (!res.ok) {
      if (hasCode(parsed)) throw new ApiError(toApiError(parsed), res.status);
      throw new ApiError({ code: codeForStatus(res.status), message: '' }, res.status);
    }
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
    system: { info: () => request('GET', '/api/info') },
    workspaces: {
      list: () => request('GET', '/api/workspaces'),
      add: (path) => request('POST', '/api/workspaces', { path }),
      remove: async (wid) => {
        await request('DELETE', `/api/workspaces/${id(wid)}`);
      },
      // No pickDirectory: a browser cannot open the native dialog.
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
    },
    approvals: {
      list: () => request('GET', '/api/approvals'),
      decide: (d) => request('POST', `/api/approvals/${id(d.approvalId)}/decide`, d),
    },
    audit: {
      list: (f) => request('GET', `/api/audit${q({ runId: f.runId, actor: f.actor, kind: f.kind })}`),
      verify: () => request('GET', '/api/audit/verify'),
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
