// @vitest-environment node
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError } from './error';
import { createHttpApi, dispositionName } from './http';
import { json, startServer } from './testserver';

let stop: (() => Promise<void>) | null = null;
afterEach(async () => {
  await stop?.();
  stop = null;
});

async function serve(handler: Parameters<typeof startServer>[0]) {
  const s = await startServer(handler);
  stop = s.close;
  return s;
}

describe('HTTP transport requests', () => {
  it('sends the bearer token, JSON bodies and the documented routes', async () => {
    const s = await serve((req, res) => {
      if (req.method === 'DELETE') return void res.writeHead(204).end();
      if (req.url === '/api/workspaces' && req.method === 'POST') {
        return json(res, 200, { id: 'ws_1', name: 'site', displayPath: '~/site', addedAt: 't' });
      }
      json(res, 200, []);
    });
    const api = createHttpApi({ baseUrl: s.url, token: 'tok' });
    expect(await api.workspaces.add('/home/u/site')).toMatchObject({ id: 'ws_1' });
    expect(await api.workspaces.remove('ws/1')).toBeUndefined();
    await api.runs.events('run_1', 7, 50);
    await api.audit.list({ runId: 'run_1', kind: '' });
    await api.settings.set({ theme: 'dark', language: 'en' });

    expect(s.seen.map((r) => `${r.method} ${r.url}`)).toEqual([
      'POST /api/workspaces',
      'DELETE /api/workspaces/ws%2F1',
      'GET /api/runs/run_1/events?after=7&limit=50',
      'GET /api/audit?runId=run_1',
      'PUT /api/settings',
    ]);
    for (const r of s.seen) expect(r.headers.authorization).toBe('Bearer tok');
    expect(JSON.parse(s.seen[0]!.body)).toEqual({ path: '/home/u/site' });
    expect(s.seen[0]!.headers['content-type']).toBe('application/json');
    expect(JSON.parse(s.seen[4]!.body)).toEqual({ theme: 'dark', language: 'en' });
  });

  it('omits Authorization when there is no token (the cookie carries it)', async () => {
    const s = await serve((_req, res) => json(res, 200, { theme: 'light', language: 'en' }));
    await createHttpApi({ baseUrl: s.url }).settings.get();
    expect(s.seen[0]!.headers.authorization).toBeUndefined();
  });
});

describe('HTTP transport error mapping', () => {
  const cases: {
    name: string;
    status: number;
    type: string;
    body: string;
    want: { code: string; message: string; next: string; status: number };
  }[] = [
    {
      name: 'API error body',
      status: 400,
      type: 'application/json',
      body: JSON.stringify({ code: 'invalid_input', message: 'choose a folder to add', next: 'Correct the input and try again.', retryable: false }),
      want: { code: 'invalid_input', message: 'choose a folder to add', next: 'Correct the input and try again.', status: 400 },
    },
    {
      name: 'bare 401',
      status: 401,
      type: 'text/plain',
      body: '',
      want: { code: 'unauthorized', message: '', next: '', status: 401 },
    },
    {
      name: 'HTML 502 from something in between',
      status: 502,
      type: 'text/html',
      body: '<h1>Bad gateway</h1>',
      want: { code: 'internal_error', message: '', next: '', status: 502 },
    },
    {
      name: '404 JSON without a code',
      status: 404,
      type: 'application/json',
      body: '{"error":"nope"}',
      want: { code: 'not_found', message: '', next: '', status: 404 },
    },
    {
      name: '200 that is not JSON',
      status: 200,
      type: 'text/html',
      body: '<!doctype html>',
      want: { code: 'bad_response', message: 'the server answered with something other than JSON', next: '', status: 200 },
    },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const s = await serve((_req, res) => {
        res.writeHead(c.status, { 'Content-Type': c.type });
        res.end(c.body);
      });
      const err = await createHttpApi({ baseUrl: s.url }).workspaces.list().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ApiError);
      const e = err as ApiError;
      expect({ code: e.code, message: e.message, next: e.next, status: e.status }).toEqual(c.want);
    });
  }

  it('a server that is gone is "unreachable"', async () => {
    const s = await serve((_req, res) => json(res, 200, []));
    const url = s.url;
    await s.close();
    stop = null;
    const err = await createHttpApi({ baseUrl: url }).workspaces.list().catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'unreachable' });
  });
});

describe('HTTP transport: profiles, policy, resume and the audit export', () => {
  it('reads profiles and a workspace policy and resumes a run on their routes', async () => {
    const s = await serve((req, res) => {
      if (req.url === '/api/profiles') return json(res, 200, [{ name: 'demo', runtime: 'script', scripted: true, default: true }]);
      json(res, 200, { workspaceId: 'ws 1', file: '.agenthub/policy.toml', source: 'default', rules: [], defaults: [] });
    });
    const api = createHttpApi({ baseUrl: s.url, token: 'tok' });
    expect(await api.runs.profiles()).toEqual([{ name: 'demo', runtime: 'script', scripted: true, default: true }]);
    expect(await api.workspaces.policy('ws 1')).toMatchObject({ source: 'default' });
    await api.runs.resume('run/1');
    expect(s.seen.map((r) => `${r.method} ${r.url}`)).toEqual([
      'GET /api/profiles',
      'GET /api/workspaces/ws%201/policy',
      'POST /api/runs/run%2F1/resume',
    ]);
  });

  it('downloads the export under the server-named file and reads its summary line', async () => {
    const body = '{"seq":1}\n{"seq":2}\n{"chainHead":"abc","entries":2,"verified":true}\n';
    const s = await serve((_req, res) => {
      res.writeHead(200, {
        'Content-Type': 'application/x-ndjson',
        'Content-Disposition': 'attachment; filename=agenthub-audit-20260101-000000.jsonl',
      });
      res.end(body);
    });
    const got: { name: string; text: string }[] = [];
    const api = createHttpApi({
      baseUrl: s.url,
      token: 'tok',
      download: (name, blob) => void blob.text().then((text) => got.push({ name, text })),
    });
    expect(await api.audit.export()).toEqual({
      saved: true,
      file: 'agenthub-audit-20260101-000000.jsonl',
      entries: 2,
      verified: true,
      head: 'abc',
    });
    await new Promise((r) => setTimeout(r, 0));
    expect(got).toEqual([{ name: 'agenthub-audit-20260101-000000.jsonl', text: body }]);
    expect(s.seen[0]!.headers.authorization).toBe('Bearer tok');
  });

  it('an export error is the server error, and nothing is downloaded', async () => {
    const s = await serve((_req, res) => json(res, 503, { code: 'not_ready', message: 'still opening', next: '' }));
    let downloads = 0;
    const api = createHttpApi({ baseUrl: s.url, download: () => downloads++ });
    await expect(api.audit.export()).rejects.toMatchObject({ code: 'not_ready', status: 503 });
    expect(downloads).toBe(0);
  });

  it('an export without its summary line is a bad response', async () => {
    const s = await serve((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'application/x-ndjson' });
      res.end('{"seq":1}\n');
    });
    let downloads = 0;
    const api = createHttpApi({ baseUrl: s.url, download: () => downloads++ });
    await expect(api.audit.export()).rejects.toMatchObject({ code: 'bad_response' });
    expect(downloads).toBe(0);
  });
});

describe('dispositionName', () => {
  it.each([
    ['attachment; filename="a.jsonl"', 'a.jsonl'],
    ['attachment; filename=b.jsonl', 'b.jsonl'],
    ['attachment; filename="../../etc/passwd"', 'fallback.jsonl'],
    [null, 'fallback.jsonl'],
  ])('%s → %s', (header, want) => {
    expect(dispositionName(header, 'fallback.jsonl')).toBe(want);
  });
});
