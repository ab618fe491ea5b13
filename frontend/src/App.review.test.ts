import { fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, describe, expect, it } from 'vitest';
import App from './App.svelte';
import type { ApprovalRequest, RunEvent, RunSummary, Workspace } from './lib/api';
import { createMemoryApi, type MemoryApiOptions } from './lib/api/memory';
import { patchRequest, shellRequest } from './lib/testdata/approvals';
import { ReviewState } from './lib/state/review.svelte';
import { SettingsState, type DisplayHost } from './lib/state/settings.svelte';
import { WorkspacesState } from './lib/state/workspaces.svelte';

const ws: Workspace = { id: 'ws_1', name: 'site', displayPath: '~/src/site', addedAt: '2026-01-01T00:00:00.000Z' };
const run: RunSummary = {
  id: 'run_1',
  sessionId: 'ses_1',
  workspaceId: 'ws_1',
  profile: 'demo',
  task: 'Give me a tour',
  state: 'NeedsApproval',
  coarse: 'waiting',
  createdAt: '2026-01-01T00:00:00.000Z',
  lastEventAt: '2026-01-01T00:00:09.000Z',
  lastSequence: 9,
  pendingApprovals: 1,
  scripted: true,
};

function ev(sequence: number, type: string, payload: unknown = {}): RunEvent {
  return { schemaVersion: 1, id: `e${sequence}`, sequence, type, runId: 'run_1', sessionId: 'ses_1', agentId: 'demo', timestamp: `2026-01-01T00:00:0${sequence}.000Z`, payload };
}

const events = [
  ev(1, 'run.created', { profile: 'demo', scripted: true }),
  ev(2, 'run.started', { from: 'Preparing', to: 'Running' }),
  ev(3, 'run.message.delta', { messageId: 'm1', text: 'Finally ' }),
  ev(4, 'run.message.delta', { messageId: 'm1', text: "I'd like to run " }),
  ev(5, 'run.message.delta', { messageId: 'm1', text: '`git status --short`.' }),
  ev(6, 'run.message.completed', { messageId: 'm1', role: 'assistant', text: "Finally I'd like to run `git status --short`." }),
  ev(7, 'run.tool.call', { toolCallId: 'call_s4_1', name: 'run_shell', arguments: { command: 'git status --short' } }),
  ev(8, 'run.approval.requested', shellRequest),
  ev(9, 'run.status.changed', { from: 'Running', to: 'NeedsApproval' }),
];

const host = (): DisplayHost => ({ applyTheme() {}, systemDark: () => false, onSystemChange: () => () => {}, storage: null });

function setup(hash: string, o: MemoryApiOptions = {}) {
  history.replaceState(null, '', `/${hash}`);
  const api = createMemoryApi({ workspaces: [ws], runs: [run], approvals: [{ ...shellRequest }], ...o });
  api.events_.set('run_1', events);
  const review = new ReviewState(api);
  render(App, { api, settings: new SettingsState(api, host()), workspaces: new WorkspacesState(api), review });
  return { api, review };
}

afterEach(() => history.replaceState(null, '', '/'));

describe('the review UI', () => {
  it('shows the run with one row per message, its status in the sidebar, and asks for the pending approval', async () => {
    const { api } = setup('#/run/run_1');
    // The dialog is its own chunk: wait for it, not for its loading stand-in
    // (the first import compiles it in vitest, which can take seconds).
    await screen.findByTestId('approval-dialog', {}, { timeout: 30_000 });
    const dialog = screen.getByRole('dialog');
    expect(dialog).toHaveAccessibleName('Run: git status --short');
    expect(document.title).toBe('(1) AgentHub');

    const view = screen.getByTestId('run-view');
    const messages = within(view).getAllByTestId('timeline-message');
    expect(messages).toHaveLength(1);
    expect(messages[0]!.querySelector('code')).toHaveTextContent('git status --short');
    expect(within(view).getByTestId('run-state')).toHaveTextContent('Needs approval');

    const row = screen.getByTestId('run-row');
    expect(row).toHaveAttribute('aria-current', 'page');
    expect(within(row).getByTestId('run-status')).toHaveTextContent('Needs approval');
    expect(within(row).getByTestId('run-pending')).toHaveAccessibleName('Approvals waiting for you: 1');

    // Esc closes without deciding, and the dialog does not come back by itself.
    await fireEvent.keyDown(window, { key: 'Escape' });
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    expect(api.calls.map((c) => c.method)).not.toContain('approvals.decide');

    await fireEvent.click(screen.getByTestId('approval-review'));
    await fireEvent.click(await screen.findByRole('button', { name: /^Approve once/ }));
    await waitFor(() => expect(screen.queryByRole('dialog')).toBeNull());
    expect(api.calls.find((c) => c.method === 'approvals.decide')?.args).toEqual([
      { approvalId: 'apr_shell', toolCallId: 'call_s4_1', decision: 'approve_once', subjectHash: 'sha256:shellshell' },
    ]);
    expect(document.title).toBe('AgentHub');
  });

  it('streams deltas into the same message row as they arrive', async () => {
    const { api } = setup('#/run/run_1', { approvals: [] });
    await screen.findByTestId('timeline-message');
    api.emit([ev(10, 'run.message.delta', { messageId: 'm2', text: 'That is ' })]);
    api.emit([ev(11, 'run.message.delta', { messageId: 'm2', text: 'the tour.' })]);
    await waitFor(() => expect(screen.getAllByTestId('timeline-message')).toHaveLength(2));
    const second = screen.getAllByTestId('timeline-message')[1]!;
    await waitFor(() => expect(second).toHaveTextContent('That is the tour.'));
    expect(second).toHaveAttribute('data-done', 'false');
    api.emit([ev(12, 'run.failed', { code: 'run_timeout', message: 'the run took longer than 10 minutes', recovery: '' })]);
    const end = await screen.findByTestId('run-end');
    expect(end).toHaveTextContent('Run failed: The run took too long');
    expect(within(end).getByTestId('failure-code')).toHaveTextContent('run_timeout');
    expect(within(end).getByTestId('failure-next')).toHaveTextContent('Narrow the task or raise the timeout in the profile.');
    expect(screen.getByTestId('run-state')).toHaveTextContent('Failed');
  });

  it("shows a refused run's own next step and an accepted advisory gating", async () => {
    const { api } = setup('#/run/run_1', { approvals: [] });
    await screen.findByTestId('timeline-message');
    api.emit([ev(10, 'runtime.gating_advisory', { runtime: 'gemini', profile: 'gm', kinds: ['network', 'shell'], acceptedBy: 'accept_advisory' })]);
    const note = await screen.findByTestId('timeline-advisory');
    expect(note).toHaveAttribute('data-kinds', 'network,shell');
    expect(note).toHaveTextContent('Advisory gating accepted by the profile (accept_advisory) for');
    expect(note).toHaveTextContent('cannot stop them');
    const next = 'To run anyway, add accept_advisory = ["shell"] to the profile "gm".';
    api.emit([ev(11, 'run.failed', { code: 'runtime_unavailable', message: "the gemini runtime cannot enforce this run's policy for shell", recovery: 'Check the runtime CLI.', next })]);
    const end = await screen.findByTestId('run-end');
    expect(within(end).getByTestId('failure-code')).toHaveTextContent('runtime_unavailable');
    expect(within(end).getByTestId('failure-message')).toHaveTextContent("cannot enforce this run's policy for shell");
    expect(within(end).getByTestId('failure-next')).toHaveTextContent(next);
  });

  it("shows a plugin hook's annotations of a response", async () => {
    const { api } = setup('#/run/run_1', { approvals: [] });
    await screen.findByTestId('timeline-message');
    api.emit([ev(10, 'run.inference.annotated', { messageId: 'm1', step: 1, hook: 'lint', annotations: [{ label: 'style', text: 'prefer early returns' }] })]);
    const note = await screen.findByTestId('timeline-annotation');
    expect(note).toHaveTextContent('Notes from plugin lint on this response');
    expect(note).toHaveTextContent('style: prefer early returns');
  });

  it('starts a demo run from the new-run form', async () => {
    const { api } = setup('#/new', { runs: [], approvals: [] });
    const form = await screen.findByTestId('new-run-form');
    const profile = within(form).getByLabelText('Profile') as HTMLSelectElement;
    expect(profile.value).toBe('demo');
    expect(profile.selectedOptions[0]).toHaveTextContent('scripted playbook, no AI model');
    expect(within(form).getByTestId('new-run-submit')).toBeDisabled();
    await fireEvent.input(within(form).getByLabelText('Task'), { target: { value: ' Show me around ' } });
    await fireEvent.click(within(form).getByTestId('new-run-submit'));
    await screen.findByTestId('run-view');
    expect(api.calls.find((c) => c.method === 'runs.start')?.args).toEqual([{ workspaceId: 'ws_1', profile: 'demo', task: 'Show me around' }]);
    expect(location.hash).toBe('#/run/run_1');
    expect(screen.getByRole('heading', { level: 2 })).toHaveTextContent('Show me around');
  });

  it('the inbox lists approvals across runs with keyboard triage', async () => {
    const other: ApprovalRequest = { ...patchRequest, runId: 'run_1' };
    setup('#/inbox', { approvals: [{ ...shellRequest }, other] });
    const items = await screen.findAllByTestId('inbox-item');
    expect(items.map((i) => i.dataset.approvalId)).toEqual(['apr_shell', 'apr_patch']);
    expect(items[0]).toHaveAttribute('tabindex', '0');
    items[0]!.focus();
    await fireEvent.keyDown(items[0]!, { key: 'ArrowDown' });
    expect(items[1]).toHaveFocus();
    await fireEvent.keyDown(items[1]!, { key: 'ArrowUp' });
    expect(items[0]).toHaveFocus();
    await fireEvent.keyDown(items[0]!, { key: 'End' });
    await fireEvent.click(document.activeElement!);
    await screen.findByTestId('approval-dialog', {}, { timeout: 30_000 });
    expect(screen.getByRole('dialog')).toHaveAttribute('data-kind', 'patch');
  });
});
