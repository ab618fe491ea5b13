// @vitest-environment node
// The HTTP transport's worktree routes (docs/API.md) against a real loopback
// server: methods, paths, bodies, and a 409 worktree_unsaved as an ApiError.
import { afterEach, describe, expect, it } from 'vitest';
import { ApiError } from './error';
import { createHttpApi } from './http';
import { json, startServer } from './testserver';

let stop: (() => Promise<void>) | null = null;
afterEach(async () => {
  await stop?.();
  stop = null;
});

describe('HTTP worktree routes', () => {
  it('calls the documented routes with their bodies', async () => {
    const s = await startServer((req, res) => {
      if (req.url.endsWith('/discard')) {
        return json(res, 409, { code: 'worktree_unsaved', message: 'uncommitted: a.txt', next: 'token t1.', retryable: false });
      }
      json(res, 200, {});
    });
    stop = s.close;
    const w = createHttpApi({ baseUrl: s.url, token: 'tok' }).worktrees!;
    await w.get('run/1');
    await w.mergePlan('run_1');
    await w.merge('run_1', { token: 'p', files: [{ path: 'a.txt', hunks: [0] }] });
    await w.keep('run_1');
    await w.planPush('run_1', 'up stream');
    const plan = { remote: 'origin', branch: 'agenthub/run_1', to: 'abc', commits: [] };
    await w.push('run_1', plan);
    const err = await w.discard('run_1', 't0').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    expect((err as ApiError).code).toBe('worktree_unsaved');
    expect((err as ApiError).status).toBe(409);
    expect(s.seen.map((r) => `${r.method} ${r.url}`)).toEqual([
      'GET /api/runs/run%2F1/worktree',
      'GET /api/runs/run_1/worktree/merge',
      'POST /api/runs/run_1/worktree/merge',
      'POST /api/runs/run_1/worktree/keep',
      'GET /api/runs/run_1/worktree/push?remote=up+stream',
      'POST /api/runs/run_1/worktree/push',
      'POST /api/runs/run_1/worktree/discard',
    ]);
    expect(JSON.parse(s.seen[2]!.body)).toEqual({ token: 'p', files: [{ path: 'a.txt', hunks: [0] }] });
    expect(JSON.parse(s.seen[5]!.body)).toEqual(plan);
    expect(JSON.parse(s.seen[6]!.body)).toEqual({ confirm: 't0' });
    expect(s.seen.every((r) => r.headers.authorization === 'Bearer tok')).toBe(true);
  });
});
