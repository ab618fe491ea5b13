// @vitest-environment node
// The HTTP transport's change-set routes (docs/API.md#changes) against a real
// loopback server: methods, paths, bodies, and a 409 conflict as an ApiError.
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError } from './error';
import { createHttpApi } from './http';
import { json, startServer } from './testserver';

let stop: (() => Promise<void>) | null = null;
afterEach(async () => {
  await stop?.();
  stop = null;
});

describe('HTTP change-set routes', () => {
  it('calls the documented routes with their bodies', async () => {
    const s = await startServer((req, res) => {
      if (req.url.endsWith('/revert') && req.body.includes('"ck_drift"')) {
        return json(res, 409, { code: 'conflict', message: 'nothing was restored: [a.txt] changed since the apply', retryable: false });
      }
      json(res, 200, { reverted: [] });
    });
    stop = s.close;
    const c = createHttpApi({ baseUrl: s.url, token: 'tok' }).changes!;
    await c.get('run/1');
    await c.comment('run_1', { approvalId: 'apr_1', path: 'a.txt', startLine: 2, endLine: 3, body: 'why' });
    await c.revert('run_1', '');
    const err = await c.revert('run_1', 'ck_drift').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).code).toBe('conflict');
    expect((err as ApiError).message).toContain('a.txt');
    expect(s.seen.map((r) => `${r.method} ${r.url}`)).toEqual([
      'GET /api/runs/run%2F1/changes',
      'POST /api/runs/run_1/comments',
      'POST /api/runs/run_1/revert',
      'POST /api/runs/run_1/revert',
    ]);
    expect(JSON.parse(s.seen[1]!.body)).toEqual({ approvalId: 'apr_1', path: 'a.txt', startLine: 2, endLine: 3, body: 'why' });
    expect(JSON.parse(s.seen[2]!.body)).toEqual({ checkpointId: '' });
    expect(s.seen.every((r) => r.headers.authorization === 'Bearer tok')).toBe(true);
  });
});
