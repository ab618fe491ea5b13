// The settings and audit pages inside the shell, over the memory api:
// navigation, the profiles from the API (scripted ones labelled so), the
// read-only policy viewer, the audit trail with its filters and export, and
// a run's link to its audit entries.
import { fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, describe, expect, it } from 'vitest';
import App from './App.svelte';
import { ApiError, type AuditEntry, type ProfileInfo, type RunSummary, type Workspace } from './lib/api';
import { createMemoryApi, type MemoryApiOptions } from './lib/api/memory';
import { ReviewState } from './lib/state/review.svelte';
import { SettingsState, type DisplayHost } from './lib/state/settings.svelte';
import { WorkspacesState } from './lib/state/workspaces.svelte';

const wsA: Workspace = { id: 'ws_a', name: 'site', displayPath: '~/src/site', addedAt: '2026-01-01T00:00:00.000Z' };
const wsB: Workspace = { id: 'ws_b', name: 'api', displayPath: '~/src/api', addedAt: '2026-01-01T00:00:00.000Z' };
const run = (id: string, workspaceId: string, task: string): RunSummary => ({
  id,
  sessionId: `ses_${id}`,
  workspaceId,
  profile: 'demo',
  task,
  state: 'Completed',
  coarse: 'done',
  createdAt: '2026-01-01T00:00:00.000Z',
  lastEventAt: '2026-01-01T00:00:09.000Z',
  lastSequence: 0,
  pendingApprovals: 0,
  scripted: true,
});
const runs = [run('run_a', 'ws_a', 'Tour the site'), run('run_b', 'ws_b', 'Tour the api')];
const profiles: ProfileInfo[] = [
  { name: 'demo', runtime: 'script', scripted: true, default: true },
  { name: 'local-qwen', runtime: 'native', provider: 'openai', model: 'qwen3:8b', baseUrl: 'http://user:secret@127.0.0.1:11434/v1?k=1', scripted: false, default: false },
  {
    name: 'cc',
    runtime: 'claude',
    provider: 'anthropic',
    model: 'sonnet',
    scripted: false,
    default: false,
    capabilities: {
      gating: { read: 'enforced', shell: 'advisory', network: 'advisory' },
      streaming: true,
      steer: false,
      durableContinuation: false,
      partialApply: true,
      usage: true,
      scripted: false,
    },
    acceptAdvisory: ['shell'],
  },
];
let seq = 0;
const entry = (over: Partial<AuditEntry>): AuditEntry => {
  seq++;
  return { seq, at: `2026-01-01T10:00:0${seq}.000Z`, actor: 'engine', surface: 'engine', kind: 'run.transition', data: {}, prevHash: `h${seq - 1}`, hash: `h${seq}`, ...over };
};
seq = 0;
const audit: AuditEntry[] = [
  entry({ actor: 'ada', surface: 'window', kind: 'workspace.added', data: { workspaceId: 'ws_a', name: 'site' } }),
  entry({ actor: 'ada', surface: 'browser', kind: 'run.created', runId: 'run_a', data: { profile: 'demo', workspaceId: 'ws_a' } }),
  entry({ kind: 'approval.requested', runId: 'run_a', toolCallId: 'call_1', data: { kind: 'patch', approvalId: 'apr_1' } }),
  entry({ actor: 'ada', surface: 'browser', kind: 'approval.resolved', runId: 'run_a', toolCallId: 'call_1', data: { decision: 'approve_once' } }),
  entry({ kind: 'patch.applied', runId: 'run_a', toolCallId: 'call_1', data: { files: [{ path: 'AGENTHUB_TOUR.md', action: 'created' }] } }),
  entry({ kind: 'run.transition', runId: 'run_b', data: { from: 'Running', to: 'Completed', reason: '' } }),
];

const host = (): DisplayHost & { theme: string } => {
  const h = { theme: '', applyTheme: (r: 'light' | 'dark') => void (h.theme = r), systemDark: () => false, onSystemChange: () => () => {}, storage: null };
  return h;
};

// The settings and audit pages are chunks of their own: the first import
// compiles them in vitest, which can take seconds on a busy machine.
const LAZY = { timeout: 30_000 };

function setup(hash: string, o: MemoryApiOptions = {}) {
  history.replaceState(null, '', `/${hash}`);
  const api = createMemoryApi({ workspaces: [wsA, wsB], runs, profiles, audit, ...o });
  const h = host();
  const settings = new SettingsState(api, h);
  render(App, { api, settings, workspaces: new WorkspacesState(api), review: new ReviewState(api) });
  return { api, host: h };
}

afterEach(() => history.replaceState(null, '', '/'));

describe('the settings page', () => {
  it('opens from the header and shows display, allowlist, policy and profiles', async () => {
    setup('#/');
    await fireEvent.click(screen.getByTestId('nav-settings'));
    expect(location.hash).toBe('#/settings');
    expect(screen.getByTestId('nav-settings')).toHaveAttribute('aria-current', 'page');
    const page = await screen.findByTestId('settings', {}, LAZY);
    expect(within(page).getByTestId('settings-display')).toBeInTheDocument();
    expect(await within(page).findAllByTestId('workspace-row')).toHaveLength(2);

    const list = await screen.findAllByTestId('profile');
    expect(list.map((p) => p.dataset.profile)).toEqual(['demo', 'local-qwen', 'cc']);
    // The demo is a playbook: labelled scripted, and no model is named.
    expect(within(list[0]!).getByTestId('profile-scripted')).toHaveTextContent('Scripted');
    expect(list[0]).toHaveTextContent('No AI model');
    expect(within(list[0]!).queryByTestId('profile-model')).toBeNull();
    expect(within(list[1]!).getByTestId('profile-model')).toHaveTextContent('qwen3:8b');
    // The endpoint is shown without credentials or query.
    expect(list[1]).toHaveTextContent('http://127.0.0.1:11434/v1');
    expect(list[1]!.textContent).not.toMatch(/secret|k=1/);
    expect(within(list[1]!).queryByTestId('profile-caps')).toBeNull();
    const caps = within(list[2]!).getByTestId('profile-caps');
    expect(caps.querySelector('[data-action="shell"]')).toHaveAttribute('data-enforcement', 'advisory');
    // The profile accepts advisory shell gating (accept_advisory), not network.
    expect(caps.querySelector('[data-action="shell"]')).toHaveAttribute('data-accepted', 'true');
    expect(caps.querySelector('[data-action="shell"]')).toHaveTextContent('advisory, accepted');
    expect(caps.querySelector('[data-action="network"]')).not.toHaveAttribute('data-accepted');
    expect(caps.querySelector('[data-action="read"]')).toHaveAttribute('data-enforcement', 'enforced');
    expect(caps.querySelector('[data-cap="resume"]')).toHaveTextContent('Resume: no');
    expect(caps.querySelector('[data-cap="streaming"]')).toHaveTextContent('Streaming: yes');
  });

  it('shows each workspace policy read-only: the file’s rules, or why it cannot be used, and the default gate', async () => {
    const { api } = setup('#/settings', {
      policies: {
        ws_b: {
          source: 'file',
          rules: [
            { class: 'shell', id: 'tests', pattern: 'go test ./...', verdict: 'allow', cwd: '.', examples: 2 },
            { class: 'git', id: 'git[1]', pattern: 'push', verdict: 'allow', ignored: true, examples: 0 },
          ],
        },
      },
    });
    const viewer = await screen.findByTestId('policy-viewer', {}, LAZY);
    await waitFor(() => expect(within(viewer).getByTestId('policy-source')).toHaveAttribute('data-source', 'default'));
    const defaults = within(viewer).getAllByTestId('policy-default');
    expect(defaults.find((r) => r.dataset.action === 'secret')).toHaveTextContent(/Secrets.*deny.*No, fixed/);
    expect(within(viewer).queryByTestId('policy-rules')).toBeNull();

    await fireEvent.change(within(viewer).getByTestId('policy-workspace'), { target: { value: 'ws_b' } });
    await waitFor(() => expect(within(viewer).getByTestId('policy-source')).toHaveAttribute('data-source', 'file'));
    const rules = within(viewer).getAllByTestId('policy-rule');
    expect(rules.map((r) => r.dataset.rule)).toEqual(['tests', 'git[1]']);
    expect(rules[0]).toHaveTextContent(/go test \.\/\.\.\..*allow.*only in \..*2 examples/);
    expect(rules[1]).toHaveTextContent('ignored: push always asks');
    expect(api.calls.filter((c) => c.method === 'workspaces.policy').map((c) => c.args[0])).toEqual(['ws_a', 'ws_b']);
    // Nothing in the viewer writes.
    expect(within(viewer).queryByRole('textbox')).toBeNull();
  });

  it('theme and language switch at once from the settings page too', async () => {
    const { api, host: h } = setup('#/settings');
    const page = await screen.findByTestId('settings', {}, LAZY);
    const display = within(page).getByTestId('settings-display');
    await fireEvent.click(within(display).getByTestId('settings-theme-dark'));
    expect(h.theme).toBe('dark');
    await fireEvent.click(within(display).getByTestId('settings-language-zh-CN'));
    await waitFor(() => expect(screen.getByTestId('nav-settings')).toHaveTextContent('设置'));
    // The same page, re-rendered in place.
    expect(screen.getByTestId('settings')).toBe(page);
    await waitFor(() => expect(api.calls.filter((c) => c.method === 'settings.set')).toHaveLength(2));
    await fireEvent.click(within(display).getByTestId('settings-language-en'));
  });
});

describe('the new-run form', () => {
  it('offers the profiles from the API, the default first, and labels scripted ones', async () => {
    const { api } = setup('#/new');
    const select = (await screen.findByTestId('new-run-profile')) as HTMLSelectElement;
    await waitFor(() => expect(select.options).toHaveLength(3));
    expect(select.value).toBe('demo');
    expect([...select.options].map((o) => o.text)).toEqual([
      'Demo — scripted playbook, no AI model',
      'local-qwen — openai · qwen3:8b',
      'cc — Claude Code CLI · anthropic · sonnet',
    ]);
    expect(screen.getByTestId('new-run-profile-hint')).toHaveTextContent(/Scripted.*No AI model is involved/);
    await fireEvent.change(select, { target: { value: 'local-qwen' } });
    expect(screen.getByTestId('new-run-profile-hint')).not.toHaveTextContent('Scripted');
    await fireEvent.input(screen.getByTestId('new-run-task'), { target: { value: 'Fix the build' } });
    await fireEvent.click(screen.getByTestId('new-run-submit'));
    await waitFor(() => expect(api.calls.find((c) => c.method === 'runs.start')?.args[0]).toEqual({ workspaceId: 'ws_a', profile: 'local-qwen', task: 'Fix the build' }));
  });
});

describe('the audit page', () => {
  it('shows the verified chain, filters it, opens runs and exports', async () => {
    const { api } = setup('#/');
    await fireEvent.click(screen.getByTestId('nav-audit'));
    expect(location.hash).toBe('#/audit');
    const view = await screen.findByTestId('audit-view', {}, LAZY);
    await waitFor(() => expect(within(view).getByTestId('audit-verify')).toHaveAttribute('data-state', 'ok'));
    expect(within(view).getByTestId('audit-verify')).toHaveTextContent('Chain verified: 6 entries, head h6');
    const rows = within(view).getAllByTestId('audit-entry');
    expect(rows.map((r) => r.dataset.seq)).toEqual(['6', '5', '4', '3', '2', '1']);
    expect(rows[1]).toHaveTextContent(/Patch applied.*AGENTHUB_TOUR\.md/);
    expect(rows[2]).toHaveTextContent(/Approval decided.*Approved once.*ada.*via the browser/);
    expect(rows[3]).toHaveTextContent(/Approval requested.*File change/);

    const filters = within(view).getByTestId('audit-filters');
    await fireEvent.change(within(filters).getByTestId('audit-filter-workspace'), { target: { value: 'ws_b' } });
    expect(within(view).getAllByTestId('audit-entry').map((r) => r.dataset.seq)).toEqual(['6']);
    await fireEvent.click(within(filters).getByTestId('audit-filter-clear'));
    await fireEvent.change(within(filters).getByTestId('audit-filter-actor'), { target: { value: 'ada' } });
    expect(within(view).getAllByTestId('audit-entry').map((r) => r.dataset.seq)).toEqual(['4', '2', '1']);
    await fireEvent.change(within(filters).getByTestId('audit-filter-kind'), { target: { value: 'workspace.added' } });
    expect(within(view).getAllByTestId('audit-entry').map((r) => r.dataset.seq)).toEqual(['1']);
    await fireEvent.change(within(filters).getByTestId('audit-filter-kind'), { target: { value: 'run.transition' } });
    expect(within(view).getByTestId('audit-empty')).toBeInTheDocument();
    await fireEvent.click(within(filters).getByTestId('audit-filter-clear'));

    await fireEvent.click(within(view).getByTestId('audit-export'));
    await waitFor(() => expect(within(view).getByTestId('audit-exported')).toHaveTextContent('Exported 6 entries to agenthub-audit.jsonl.'));
    expect(api.calls.filter((c) => c.method === 'audit.export')).toHaveLength(1);

    const open = within(view).getAllByTestId('audit-open-run')[0]!;
    await fireEvent.click(open);
    expect(location.hash).toBe('#/run/run_b');
    expect(await screen.findByTestId('run-view')).toBeInTheDocument();
  });

  it('a run links to its own entries', async () => {
    setup('#/run/run_a');
    const link = await screen.findByTestId('run-audit-link');
    expect(link).toHaveAttribute('href', '#/audit/run/run_a');
    history.pushState(null, '', '/#/audit/run/run_a');
    window.dispatchEvent(new HashChangeEvent('hashchange'));
    const view = await screen.findByTestId('audit-view');
    await waitFor(() => expect(within(view).getAllByTestId('audit-entry').map((r) => r.dataset.kind)).toEqual([
      'patch.applied',
      'approval.resolved',
      'approval.requested',
      'run.created',
    ]));
    expect((within(view).getByTestId('audit-filter-run') as HTMLSelectElement).value).toBe('run_a');
  });

  it('says where the chain is broken and flags the entries from there on', async () => {
    setup('#/audit', { auditVerify: { ok: false, brokenSeq: 5, head: 'h6' } });
    const view = await screen.findByTestId('audit-view');
    await waitFor(() => expect(within(view).getByTestId('audit-verify')).toHaveAttribute('data-state', 'broken'));
    expect(within(view).getByTestId('audit-verify')).toHaveTextContent('Chain broken at entry #5');
    expect(within(view).getAllByTestId('audit-entry-broken')).toHaveLength(2);
  });
});

describe('resuming an interrupted run', () => {
  const interrupted = (over: Partial<RunSummary>): RunSummary => ({
    ...run('run_i', 'ws_a', 'Long task'),
    state: 'Failed',
    failure: { code: 'run_interrupted', message: 'AgentHub stopped while the run was active', next: '' },
    ...over,
  });

  it('offers "Resume from last checkpoint" and opens the new run', async () => {
    const { api } = setup('#/run/run_i', { runs: [interrupted({ resumable: true })] });
    const button = await screen.findByTestId('run-resume');
    expect(button).toHaveTextContent('Resume from last checkpoint');
    await fireEvent.click(button);
    await waitFor(() => expect(location.hash).toMatch(/^#\/run\/run_\d+$/));
    expect(location.hash).not.toBe('#/run/run_i');
    expect(api.calls.filter((c) => c.method === 'runs.resume').map((c) => c.args)).toEqual([['run_i']]);
    await waitFor(() => expect(screen.queryByTestId('run-resume')).toBeNull());
  });

  it('shows the error when resuming fails, and stays on the run', async () => {
    const { api } = setup('#/run/run_i', { runs: [interrupted({ resumable: true })] });
    api.fail('runs.resume', new ApiError({ code: 'invalid_input', message: 'run run_i was not interrupted' }));
    await fireEvent.click(await screen.findByTestId('run-resume'));
    expect(await screen.findByText('run run_i was not interrupted')).toBeInTheDocument();
    expect(location.hash).toBe('#/run/run_i');
  });

  const hidden: [string, Partial<RunSummary>][] = [
    ['the server says it cannot resume', { resumable: false }],
    ['an external runtime without durable continuation', { profile: 'cc', resumable: undefined }],
    ['another failure', { failure: { code: 'run_timeout', message: 'too long', next: '' }, resumable: undefined }],
    ['a completed run', { state: 'Completed', failure: undefined, resumable: undefined }],
  ];
  for (const [name, over] of hidden) {
    it(`no resume button for ${name}`, async () => {
      const { api } = setup('#/run/run_i', { runs: [interrupted(over)] });
      await screen.findByTestId('run-audit-link');
      // The profiles have loaded, so the answer is final.
      await waitFor(() => expect(api.calls.some((c) => c.method === 'runs.profiles')).toBe(true));
      await new Promise((r) => setTimeout(r, 0));
      expect(screen.queryByTestId('run-resume')).toBeNull();
    });
  }

  it('without the server’s answer, a run of the bundled playbook (script runtime) can resume', async () => {
    setup('#/run/run_i', { runs: [interrupted({ resumable: undefined })] });
    expect(await screen.findByTestId('run-resume')).toBeInTheDocument();
  });
});
