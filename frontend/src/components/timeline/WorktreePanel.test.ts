// The run view's worktree panel over the memory api plus a worktrees facade
// that answers like the Go routes (docs/API.md; the HTTP transport's routes
// are checked in lib/api/worktrees.test.ts): review and merge the files that
// apply (a conflict cannot be chosen), discard only after the unsaved work is
// listed, sending that listing's token, push the plan shown, and nothing at
// all for a run in the checkout.
import { fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { describe, expect, it } from 'vitest';
import WorktreePanel from './WorktreePanel.svelte';
import { API_CONTEXT_KEY, ApiError, type WorktreesAPI } from '../../lib/api';
import { createMemoryApi } from '../../lib/api/memory';

interface Seen {
  method: string;
  url: string;
  body: string;
}

const view = {
  runId: 'run_1',
  workspaceId: 'ws_1',
  branch: 'agenthub/run_1',
  base: 'abc',
  state: 'active',
  uncommitted: ['a.txt', 'new.txt'],
  token: 'tok-listing',
};

const plan = {
  runId: 'run_1',
  branch: 'agenthub/run_1',
  base: 'abc',
  token: 'tok-plan',
  files: [
    { path: 'a.txt', status: 'apply', checkout: 'h1', base: 'h1', after: 'h2', diff: { hunks: [{}] } },
    { path: 'b.txt', status: 'conflict', reason: 'the checkout changed', checkout: 'h3', base: 'h1', after: 'h2', diff: { hunks: [{}] } },
  ],
};

const pushPlan = { remote: 'origin', branch: 'agenthub/run_1', to: '0123456789abcdef', commits: [{ hash: '0123456789abcdef', subject: 'agent work' }] };

/** A worktrees facade that routes each call as the HTTP transport would and lets the test answer. */
function facade(handler: (req: Seen) => [number, unknown], seen: Seen[]): WorktreesAPI {
  const call = async <T,>(method: string, url: string, body?: unknown): Promise<T> => {
    const req = { method, url, body: body === undefined ? '' : JSON.stringify(body) };
    seen.push(req);
    const [status, out] = handler(req);
    if (status >= 400) throw new ApiError(out as { code: string; message: string }, status);
    return out as T;
  };
  const r = '/api/runs/';
  return {
    get: (id) => call('GET', `${r}${id}/worktree`),
    mergePlan: (id) => call('GET', `${r}${id}/worktree/merge`),
    merge: (id, req) => call('POST', `${r}${id}/worktree/merge`, req),
    keep: (id) => call('POST', `${r}${id}/worktree/keep`),
    discard: (id, confirm) => call('POST', `${r}${id}/worktree/discard`, { confirm }),
    planPush: (id, remote) => call('GET', `${r}${id}/worktree/push?remote=${remote}`),
    push: (id, plan) => call('POST', `${r}${id}/worktree/push`, plan),
  };
}

async function setup(handler: (req: Seen) => [number, unknown]) {
  const seen: Seen[] = [];
  const api = { ...createMemoryApi(), worktrees: facade(handler, seen) };
  render(WorktreePanel, { props: { runId: 'run_1', ended: true }, context: new Map([[API_CONTEXT_KEY, api]]) });
  return { seen };
}

describe('worktree panel', () => {
  it('merges the chosen files with the plan token, never a conflict', async () => {
    const s = await setup((req) => {
      if (req.url === '/api/runs/run_1/worktree') return [200, view];
      if (req.url === '/api/runs/run_1/worktree/merge' && req.method === 'GET') return [200, plan];
      if (req.url === '/api/runs/run_1/worktree/merge') return [200, { files: [{ path: 'a.txt', action: 'modified' }], cleaned: false, remaining: 1, state: 'active' }];
      return [404, { code: 'not_found', message: 'no route' }];
    });
    expect(await screen.findByTestId('worktree-summary')).toHaveTextContent('2 uncommitted file(s), 0 commit(s) on no other branch');
    await fireEvent.click(screen.getByTestId('worktree-review'));
    const files = await screen.findAllByTestId('worktree-file');
    expect(files.map((f) => f.dataset.status)).toEqual(['apply', 'conflict']);
    expect(within(files[1]!).getByRole('checkbox')).toBeDisabled();
    expect(within(files[0]!).getByRole('checkbox')).toBeChecked();
    await fireEvent.click(screen.getByTestId('worktree-merge'));
    expect(await screen.findByTestId('worktree-merged')).toHaveTextContent('Merged 1 file(s) into the checkout. 1 file(s) of the run are not in the checkout.');
    const post = s.seen.find((r) => r.method === 'POST' && r.url.endsWith('/worktree/merge'));
    expect(JSON.parse(post!.body)).toEqual({ token: 'tok-plan', files: [{ path: 'a.txt' }] });
  });

  it('lists unsaved work before a discard and confirms that listing only', async () => {
    const s = await setup((req) => {
      if (req.url === '/api/runs/run_1/worktree' && req.method === 'GET') return [200, view];
      if (req.url.endsWith('/worktree/discard')) return [200, { ...view, state: 'discarded', uncommitted: [] }];
      return [404, { code: 'not_found', message: 'no route' }];
    });
    await fireEvent.click(await screen.findByTestId('worktree-discard'));
    const listing = await screen.findByTestId('worktree-unsaved');
    expect(listing).toHaveTextContent('a.txt');
    expect(listing).toHaveTextContent('new.txt');
    expect(s.seen.some((r) => r.url.endsWith('/discard'))).toBe(false);
    await fireEvent.click(screen.getByTestId('worktree-discard'));
    await waitFor(() => expect(screen.getByTestId('worktree-panel').dataset.state).toBe('discarded'));
    const post = s.seen.find((r) => r.url.endsWith('/discard'));
    expect(JSON.parse(post!.body)).toEqual({ confirm: 'tok-listing' });
  });

  it('shows the commits of a push and pushes exactly that plan', async () => {
    const s = await setup((req) => {
      if (req.url === '/api/runs/run_1/worktree') return [200, view];
      if (req.url === '/api/runs/run_1/worktree/push?remote=upstream') return [200, pushPlan];
      if (req.url === '/api/runs/run_1/worktree/push' && req.method === 'POST') return [200, pushPlan];
      return [404, { code: 'not_found', message: 'no route' }];
    });
    const remote = await screen.findByTestId('worktree-remote');
    await fireEvent.input(remote, { target: { value: 'upstream' } });
    await fireEvent.click(screen.getByTestId('worktree-push-show'));
    expect(await screen.findByTestId('worktree-push-plan')).toHaveTextContent('0123456789 agent work');
    await fireEvent.click(screen.getByTestId('worktree-push'));
    expect(await screen.findByTestId('worktree-pushed')).toHaveTextContent('Pushed agenthub/run_1 to origin.');
    const post = s.seen.find((r) => r.method === 'POST' && r.url.endsWith('/worktree/push'));
    expect(JSON.parse(post!.body)).toEqual(pushPlan);
  });

  it('shows nothing for a run in the checkout', async () => {
    const s = await setup(() => [404, { code: 'not_found', message: 'no worktree run_1' }]);
    await waitFor(() => expect(s.seen.length).toBeGreaterThan(0));
    expect(screen.queryByTestId('worktree-panel')).toBeNull();
    expect(screen.queryByTestId('error-notice')).toBeNull();
  });
});
