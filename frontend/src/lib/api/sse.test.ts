// @vitest-environment node
import { afterEach, describe, expect, it } from 'vitest';
import type { ApiError } from './error';
import { createHttpApi } from './http';
import { openStream, SseParser, type SseMessage } from './sse';
import { startServer } from './testserver';
import type { RunEvent } from './types';

describe('SseParser', () => {
  const cases: { name: string; chunks: string[]; want: SseMessage[]; lastId?: string }[] = [
    {
      name: 'one message',
      chunks: ['id: run_1:1\ndata: {"a":1}\n\n'],
      want: [{ id: 'run_1:1', event: 'message', data: '{"a":1}' }],
    },
    {
      name: 'split across chunks at every boundary',
      chunks: ['i', 'd: 7\nda', 'ta: x', '\n', '\n'],
      want: [{ id: '7', event: 'message', data: 'x' }],
    },
    {
      name: 'CRLF and a CR split from its LF',
      chunks: ['id: 2\r', '\ndata: y\r\n\r\n'],
      want: [{ id: '2', event: 'message', data: 'y' }],
    },
    {
      name: 'comments, multi-line data, named events, id carried over',
      chunks: [': ping\n\nid: 3\nevent: hello\ndata: a\ndata: b\n\ndata: c\n\n'],
      want: [
        { id: '3', event: 'hello', data: 'a\nb' },
        { id: '3', event: 'message', data: 'c' },
      ],
    },
    {
      name: 'an id-only block updates the last id without a message',
      chunks: ['id: 9\n\n'],
      want: [],
      lastId: '9',
    },
    {
      name: 'no dispatch before the blank line',
      chunks: ['data: pending\n'],
      want: [],
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const p = new SseParser();
      const got = c.chunks.flatMap((ch) => p.push(ch));
      expect(got).toEqual(c.want);
      if (c.lastId !== undefined) expect(p.lastEventId).toBe(c.lastId);
    });
  }

  it('reads retry:', () => {
    const p = new SseParser();
    p.push('retry: 1500\n\n');
    expect(p.retry).toBe(1500);
  });
});

let stop: (() => Promise<void>) | null = null;
afterEach(async () => {
  await stop?.();
  stop = null;
});

const ev = (runId: string, sequence: number): RunEvent => ({
  schemaVersion: 1,
  id: `evt_${sequence}`,
  sequence,
  type: 'run.message.delta',
  runId,
  sessionId: 'ses_1',
  agentId: 'demo',
  timestamp: '2026-01-01T00:00:00.000Z',
  payload: {},
});

describe('event stream over a real server', () => {
  it('reconnects with Last-Event-ID and the bearer token, resuming after the last event', async () => {
    let connection = 0;
    const s = await startServer((req, res) => {
      connection++;
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      if (connection === 1) {
        // Two events, then the server drops the connection.
        res.end(`id: run_1:1\ndata: ${JSON.stringify(ev('run_1', 1))}\n\nid: run_1:2\ndata: ${JSON.stringify(ev('run_1', 2))}\n\n`);
        return;
      }
      const after = req.headers['last-event-id'];
      res.write(`: resumed after ${String(after)}\n\nid: run_1:3\ndata: ${JSON.stringify(ev('run_1', 3))}\n\n`);
    });
    stop = s.close;

    const api = createHttpApi({ baseUrl: s.url, token: 'tok', backoff: () => 5 });
    const got: number[] = [];
    const statuses: string[] = [];
    let off = () => {};
    await new Promise<void>((done) => {
      off = api.events.subscribe({
        onEvents: (b) => {
          got.push(...b.map((e) => e.sequence));
          if (got.length === 3) done();
        },
        onStatus: (st) => statuses.push(st),
      });
    });
    off();

    expect(got).toEqual([1, 2, 3]);
    expect(s.seen).toHaveLength(2);
    expect(s.seen.map((r) => r.url)).toEqual(['/api/stream', '/api/stream']);
    expect(s.seen[0]!.headers['last-event-id']).toBeUndefined();
    expect(s.seen[1]!.headers['last-event-id']).toBe('run_1:2');
    expect(s.seen.every((r) => r.headers.authorization === 'Bearer tok')).toBe(true);
    expect(s.seen[0]!.headers.accept).toBe('text/event-stream');
    expect(statuses.slice(0, 3)).toEqual(['open', 'reconnecting', 'open']);
  });

  it('stops on 401 with an unauthorized error instead of retrying', async () => {
    const s = await startServer((_req, res) => {
      res.writeHead(401, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify({ code: 'unauthorized', message: 'missing token', next: 'Open the URL printed by `agenthub serve`, which carries the token.' }));
    });
    stop = s.close;
    const err = await new Promise<ApiError>((resolve) => {
      openStream({
        url: `${s.url}/api/stream`,
        fetch: globalThis.fetch,
        headers: {},
        backoff: () => 1,
        onMessages: () => {},
        onError: resolve,
      });
    });
    expect(err).toMatchObject({ code: 'unauthorized', message: 'missing token' });
    await new Promise((r) => setTimeout(r, 30));
    expect(s.seen).toHaveLength(1);
  });

  it('starts from a given Last-Event-ID and closes cleanly', async () => {
    const s = await startServer((_req, res) => {
      res.writeHead(200, { 'Content-Type': 'text/event-stream' });
      res.write(': open\n\n');
    });
    stop = s.close;
    const statuses: string[] = [];
    let close = () => {};
    await new Promise<void>((opened) => {
      close = openStream({
        url: `${s.url}/api/stream`,
        fetch: globalThis.fetch,
        headers: {},
        lastEventId: 'run_9:41',
        onMessages: () => {},
        onStatus: (st) => {
          statuses.push(st);
          if (st === 'open') opened();
        },
      });
    });
    close();
    await new Promise((r) => setTimeout(r, 20));
    expect(s.seen[0]!.headers['last-event-id']).toBe('run_9:41');
    expect(statuses).toEqual(['open', 'closed']);
  });
});
