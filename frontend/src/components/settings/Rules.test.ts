// Issue 21, the rules in Settings over the memory api: every rule with its
// file (repository or data directory), scope and who added it; revoking one
// asks first and then calls the API with the rule's key; a refused
// revocation shows its error; where "always allow" writes is a setting, the
// data directory by default; all of it in 中文 too.
import { fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, describe, expect, it } from 'vitest';
import App from '../../App.svelte';
import { ApiError, type PolicyRule, type Workspace } from '../../lib/api';
import { createMemoryApi, type MemoryApiOptions } from '../../lib/api/memory';
import { setLocale } from '../../lib/i18n';
import { ReviewState } from '../../lib/state/review.svelte';
import { SettingsState, type DisplayHost } from '../../lib/state/settings.svelte';
import { WorkspacesState } from '../../lib/state/workspaces.svelte';

const ws: Workspace = { id: 'ws_a', name: 'site', displayPath: '~/src/site', addedAt: '2026-01-01T00:00:00.000Z' };
const dataRule: PolicyRule = {
  class: 'shell',
  id: 'always-shell-1',
  pattern: 'git status …',
  verdict: 'allow',
  cwd: '.',
  examples: 0,
  site: 'data',
  file: 'policy/ws_a.toml',
  scope: 'workspace',
  key: 'k-data',
  addedBy: 'ada',
  addedVia: 'window',
  addedAt: '2026-11-25T09:00:00.000Z',
  addedInRun: 'run_1',
};
const repoRule: PolicyRule = {
  class: 'write',
  id: 'docs',
  pattern: 'docs/**',
  verdict: 'allow',
  examples: 0,
  site: 'repository',
  file: '.agenthub/policy.toml',
  scope: 'workspace',
  key: 'k-repo',
};
const host = (): DisplayHost => ({ applyTheme: () => {}, systemDark: () => false, onSystemChange: () => () => {}, storage: null });
const LAZY = { timeout: 30_000 };

function setup(o: MemoryApiOptions = {}) {
  history.replaceState(null, '', '/#/settings');
  const api = createMemoryApi({
    workspaces: [ws],
    policies: { ws_a: { source: 'file', rules: [repoRule, dataRule] } },
    ...o,
  });
  render(App, { api, settings: new SettingsState(api, host()), workspaces: new WorkspacesState(api), review: new ReviewState(api) });
  return api;
}

afterEach(() => {
  history.replaceState(null, '', '/');
  setLocale('en');
});

describe('rules in settings', () => {
  it('lists every rule with its file, scope and who added it, and revokes one after asking', async () => {
    const api = setup();
    const viewer = await screen.findByTestId('policy-viewer', {}, LAZY);
    const rows = await within(viewer).findAllByTestId('policy-rule');
    expect(rows.map((r) => [r.dataset.rule, r.dataset.site])).toEqual([
      ['docs', 'repository'],
      ['always-shell-1', 'data'],
    ]);
    expect(within(rows[0]!).getByTestId('policy-rule-file')).toHaveTextContent('repository: .agenthub/policy.toml');
    expect(within(rows[0]!).getByTestId('policy-rule-added')).toHaveTextContent('written by hand');
    expect(within(rows[1]!).getByTestId('policy-rule-file')).toHaveTextContent('data directory: policy/ws_a.toml');
    expect(within(rows[1]!).getByTestId('policy-rule-added')).toHaveTextContent(/by ada \(window\)/);
    expect(rows[1]).toHaveTextContent('every run in this workspace');

    // Revoke asks first; Cancel keeps the rule.
    await fireEvent.click(within(rows[1]!).getByTestId('policy-revoke'));
    expect(within(rows[1]!).getByTestId('policy-revoke-confirm')).toHaveTextContent('Revoke always-shell-1?');
    expect(api.calls.some((c) => c.method === 'workspaces.revokeRule')).toBe(false);
    await fireEvent.click(within(rows[1]!).getByTestId('policy-revoke-yes'));
    await waitFor(() => expect(within(viewer).getAllByTestId('policy-rule').map((r) => r.dataset.rule)).toEqual(['docs']));
    expect(api.calls.filter((c) => c.method === 'workspaces.revokeRule').map((c) => c.args)).toEqual([['ws_a', 'k-data']]);
    expect(await screen.findByText('Rule always-shell-1 was revoked.')).toBeTruthy();
  });

  it('shows a refused revocation as an error and the rules as they are', async () => {
    const api = setup({ failures: { 'workspaces.revokeRule': new ApiError({ code: 'not_found', message: 'this workspace has no such rule' }) } });
    const viewer = await screen.findByTestId('policy-viewer', {}, LAZY);
    const rows = await within(viewer).findAllByTestId('policy-rule');
    await fireEvent.click(within(rows[0]!).getByTestId('policy-revoke'));
    await fireEvent.click(within(rows[0]!).getByTestId('policy-revoke-yes'));
    const notice = await within(viewer).findByTestId('error-notice');
    expect(notice).toHaveAttribute('data-code', 'not_found');
    expect(within(viewer).getAllByTestId('policy-rule')).toHaveLength(2);
    expect(api.calls.filter((c) => c.method === 'workspaces.revokeRule')).toHaveLength(1);
  });

  it('says where always allow writes, the data directory by default, and saves a change', async () => {
    const api = setup();
    const box = await screen.findByTestId('rule-location', {}, LAZY);
    await waitFor(() => expect(within(box).getByTestId('rule-location-data')).toBeChecked());
    expect(box).toHaveTextContent('nothing appears in git status');
    await fireEvent.click(within(box).getByTestId('rule-location-repository'));
    await waitFor(() => expect(api.calls.some((c) => c.method === 'settings.set')).toBe(true));
    const saved = api.calls.filter((c) => c.method === 'settings.set').at(-1)!.args[0] as { ruleLocation?: string };
    expect(saved.ruleLocation).toBe('repository');
    expect(within(box).getByTestId('rule-location-repository')).toBeChecked();
  });

  it('speaks 中文', async () => {
    setup({ settings: { theme: 'light', language: 'zh-CN' } });
    const viewer = await screen.findByTestId('policy-viewer', {}, LAZY);
    const rows = await within(viewer).findAllByTestId('policy-rule');
    expect(within(rows[1]!).getByTestId('policy-rule-file')).toHaveTextContent('数据目录：policy/ws_a.toml');
    expect(within(rows[0]!).getByTestId('policy-revoke')).toHaveTextContent('撤销');
    expect(screen.getByTestId('rule-location')).toHaveTextContent('不会出现在 git status 中');
  });
});
