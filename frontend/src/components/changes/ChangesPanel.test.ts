// The run's Changes panel over the memory api plus a changes facade that
// routes each call as the HTTP transport does (docs/API.md#changes): the
// tree shows each file with its state, scopes filter by turn, the pending
// proposals are decided in one action as one decision per approval (each
// with its own hash), a refused revert shows the files, a revert of one
// change names its checkpoint and the run's names none, and a comment goes
// to the change the focused file belongs to.
import { fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { describe, expect, it } from 'vitest';
import ChangesPanel from './ChangesPanel.svelte';
import ToolDiff from '../shared/diff/ToolDiff.svelte';
import { decisions, pending, rows, toolDiff } from '../../lib/changes';
import { API_CONTEXT_KEY, ApiError, type ChangeSet, type ChangesAPI, type Decision } from '../../lib/api';
import { createMemoryApi } from '../../lib/api/memory';

const model = (path: string, text: string) => ({
  status: 'added' as const,
  old: { exists: false, size: 0, lines: 0 },
  new: { path, exists: true, size: text.length, lines: 1 },
  hunks: [{ oldStart: 0, oldLines: 0, newStart: 1, newLines: 1, lines: [{ op: 'add' as const, text, new: 1, eol: 'lf' as const }] }],
  stats: { added: 1, deleted: 0 },
});

function change(id: string, path: string, state: 'proposed' | 'applied' | 'rejected' | 'reverted', turn: number, seq: number) {
  const proposed = state === 'proposed';
  return {
    toolCallId: `call_${id}`,
    approvalId: `apr_${id}`,
    subjectHash: `sha256:${id}`,
    checkpointId: state === 'applied' || state === 'reverted' ? `ck_${id}` : undefined,
    tool: 'write_file',
    turn,
    state,
    pending: proposed,
    files: [{ path, operation: 'create', preimage: 'absent', diff: model(path, `${id} content`) }],
    sequence: seq,
  };
}

const set = (): ChangeSet => ({
  runId: 'run_1',
  workspaceId: 'ws_1',
  lastTurn: 2,
  changes: [
    change('a', 'src/a.txt', 'applied', 1, 5),
    change('b', 'b.txt', 'proposed', 2, 9),
    change('c', 'c.txt', 'proposed', 2, 11),
    change('d', 'd.txt', 'rejected', 2, 13),
  ],
  comments: [],
});

interface Seen {
  method: string;
  url: string;
  body: string;
}

function facade(handler: (req: Seen) => [number, unknown], seen: Seen[]): ChangesAPI {
  const call = async <T,>(method: string, url: string, body?: unknown): Promise<T> => {
    const req = { method, url, body: body === undefined ? '' : JSON.stringify(body) };
    seen.push(req);
    const [status, out] = handler(req);
    if (status >= 400) throw new ApiError(out as { code: string; message: string }, status);
    return out as T;
  };
  return {
    get: (id) => call('GET', `/api/runs/${id}/changes`),
    comment: (id, c) => call('POST', `/api/runs/${id}/comments`, c),
    revert: (id, checkpointId) => call('POST', `/api/runs/${id}/revert`, { checkpointId }),
  };
}

function setup(handler: (req: Seen) => [number, unknown]) {
  const seen: Seen[] = [];
  const decided: Decision[] = [];
  const mem = createMemoryApi();
  const api = {
    ...mem,
    approvals: { ...mem.approvals, decide: async (d: Decision) => (decided.push(d), { outcome: 'accepted' }) },
    changes: facade(handler, seen),
  };
  render(ChangesPanel, { props: { runId: 'run_1', rev: 0 }, context: new Map([[API_CONTEXT_KEY, api]]) });
  return { seen, decided };
}

const gets = (seen: Seen[]) => seen.filter((s) => s.method === 'GET').length;

describe('changes model', () => {
  it('filters by turn, sorts by path, and makes one decision per approval with its own hash', () => {
    const s = set();
    expect(rows(s, 'run').map((r) => r.path)).toEqual(['b.txt', 'c.txt', 'd.txt', 'src/a.txt']);
    expect(rows(s, 'turn').map((r) => r.path)).toEqual(['b.txt', 'c.txt', 'd.txt']);
    expect(rows(s, 'branch')).toEqual([]);
    const p = pending(rows(s, 'run'));
    expect(decisions(p, 'approve_once')).toEqual([
      { approvalId: 'apr_b', toolCallId: 'call_b', decision: 'approve_once', subjectHash: 'sha256:b' },
      { approvalId: 'apr_c', toolCallId: 'call_c', decision: 'approve_once', subjectHash: 'sha256:c' },
    ]);
  });
});

describe('changes panel', () => {
  it('shows every file with its state and the focused diff, and scopes by turn', async () => {
    setup(() => [200, set()]);
    const tree = await screen.findByTestId('changes-tree');
    const files = within(tree).getAllByTestId('changes-file');
    expect(files.map((f) => [f.dataset.path, f.dataset.state])).toEqual([
      ['b.txt', 'proposed'],
      ['c.txt', 'proposed'],
      ['d.txt', 'rejected'],
      ['src/a.txt', 'applied'],
    ]);
    expect(screen.getByTestId('changes-pending').textContent).toContain('2');
    await waitFor(() => expect(screen.getByTestId('changes-panel').textContent).toContain('b content'));
    await fireEvent.click(within(files[3]!).getByRole('button', { name: 'src/a.txt' }));
    await waitFor(() => expect(screen.getByTestId('changes-panel').textContent).toContain('a content'));
    await fireEvent.click(screen.getByTestId('changes-scope-turn').querySelector('input')!);
    await waitFor(() => expect(within(tree).getAllByTestId('changes-file')).toHaveLength(3));
  });

  it('decides the chosen pending proposals in one action, one decision each', async () => {
    const { decided, seen } = setup(() => [200, set()]);
    const boxes = await screen.findAllByTestId('changes-choose');
    expect(boxes).toHaveLength(2);
    await fireEvent.click(screen.getByTestId('changes-approve'));
    await waitFor(() => expect(decided).toHaveLength(2));
    expect(decided.map((d) => [d.approvalId, d.subjectHash, d.decision])).toEqual([
      ['apr_b', 'sha256:b', 'approve_once'],
      ['apr_c', 'sha256:c', 'approve_once'],
    ]);
    await waitFor(() => expect(gets(seen)).toBe(2)); // read again after the decisions
  });

  it('leaves out an unchosen proposal and rejects the rest', async () => {
    const { decided } = setup(() => [200, set()]);
    const boxes = await screen.findAllByTestId('changes-choose');
    await fireEvent.click(boxes[0]!);
    expect(screen.getByTestId('changes-reject').textContent).toContain('1');
    await fireEvent.click(screen.getByTestId('changes-reject'));
    await waitFor(() => expect(decided).toHaveLength(1));
    expect(decided[0]).toMatchObject({ approvalId: 'apr_c', decision: 'reject_and_tell' });
  });

  it('reverts one change by its checkpoint, the run with none, and shows a refusal naming the files', async () => {
    let refuse = true;
    const { seen } = setup((req) => {
      if (req.method === 'GET') return [200, set()];
      if (refuse) {
        refuse = false;
        return [409, { code: 'conflict', message: 'nothing was restored: [src/a.txt] changed since the apply' }];
      }
      return [200, { reverted: [{ checkpointId: 'ck_undo', files: [] }] }];
    });
    await fireEvent.click(await screen.findByTestId('changes-revert'));
    expect(await screen.findByText(/src\/a\.txt\] changed since the apply/)).toBeTruthy();
    await fireEvent.click(screen.getByTestId('changes-revert-run'));
    await screen.findByTestId('changes-notice');
    const posts = seen.filter((s) => s.method === 'POST');
    expect(posts.map((p) => [p.url, p.body])).toEqual([
      ['/api/runs/run_1/revert', '{"checkpointId":"ck_a"}'],
      ['/api/runs/run_1/revert', '{"checkpointId":""}'],
    ]);
  });

  it('comments on lines of the focused proposal, bound to its approval', async () => {
    const { seen } = setup((req) => (req.method === 'GET' ? [200, set()] : [200, { id: 'cmt_1' }]));
    await screen.findByTestId('changes-comment-form');
    await fireEvent.input(screen.getByTestId('changes-comment-from'), { target: { value: '2' } });
    await fireEvent.input(screen.getByTestId('changes-comment-to'), { target: { value: '3' } });
    await fireEvent.input(screen.getByTestId('changes-comment-text'), { target: { value: 'name it bee' } });
    await fireEvent.click(screen.getByTestId('changes-comment-add'));
    await waitFor(() => expect(seen.some((s) => s.method === 'POST')).toBe(true));
    const post = seen.find((s) => s.method === 'POST')!;
    expect(post.url).toBe('/api/runs/run_1/comments');
    expect(JSON.parse(post.body)).toEqual({ approvalId: 'apr_b', path: 'b.txt', startLine: 2, endLine: 3, body: 'name it bee' });
  });

  it('shows a worktree run\'s branch against its base', async () => {
    setup(() => [200, { ...set(), branch: { base: 'abc', files: [model('wt.txt', 'on the branch')] } }]);
    await screen.findByTestId('changes-tree');
    await fireEvent.click(screen.getByTestId('changes-scope-branch').querySelector('input')!);
    await waitFor(() => expect(screen.getByTestId('changes-panel').textContent).toContain('on the branch'));
    expect(screen.queryByTestId('changes-tree')).toBeNull();
  });

  it('shows nothing for a run without changes', async () => {
    const { seen } = setup(() => [200, { ...set(), changes: [] }]);
    await waitFor(() => expect(gets(seen)).toBe(1));
    expect(screen.queryByTestId('changes-panel')).toBeNull();
  });
});

describe('a file change in the timeline', () => {
  const unified = '--- a/x.txt\n+++ b/x.txt\n@@ -1 +1 @@\n-old words\n+new words\n';
  const approval = (preview: unknown) => ({
    kind: 'approval' as const,
    key: 'a',
    seq: 3,
    at: '2026-01-01T00:00:00.000Z',
    request: { preview } as never,
    resolved: null,
  });
  it('is the diff of its approval preview for write_file, edit_file and delete_file, else its arguments', () => {
    expect(toolDiff({ name: 'write_file', approval: approval({ path: 'x.txt', operation: 'modify', unified }) })).toHaveLength(1);
    expect(toolDiff({ name: 'run_shell', approval: approval({ path: 'x.txt', unified }) })).toEqual([]);
    expect(toolDiff({ name: 'write_file' })).toEqual([]);
  });
  it('renders the diff, not the escaped JSON', async () => {
    const item = {
      kind: 'tool' as const, key: 't', seq: 2, at: '2026-01-01T00:00:00.000Z', toolCallId: 'c1', name: 'write_file',
      arguments: { path: 'x.txt', content: 'new words\n' }, result: null, reads: [],
      approval: approval({ path: 'x.txt', operation: 'modify', unified }),
    };
    render(ToolDiff, { props: { item } });
    const diff = await screen.findByTestId('tool-diff');
    await waitFor(() => expect(diff.textContent).toContain('new words'));
    expect(diff.textContent).toContain('old words');
    expect(diff.textContent).not.toContain('\\n');
  });
});
