// Live state (issue 21): a profile file fixed or broken outside AgentHub,
// announced by the engine as system.changed, shows in the settings view and
// the new-run form without a reload; a missing workspace is marked and
// cannot start a run; a lost stream shows the reconnect banner.
import { fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { describe, expect, it } from 'vitest';
import App from './App.svelte';
import type { RunEvent, StreamHandlers, Workspace } from './lib/api';
import { createMemoryApi } from './lib/api/memory';
import { ReviewState } from './lib/state/review.svelte';
import { SettingsState, type DisplayHost } from './lib/state/settings.svelte';
import { WorkspacesState } from './lib/state/workspaces.svelte';

const host: DisplayHost = { applyTheme: () => {}, systemDark: () => false, onSystemChange: () => () => {}, storage: null };

const changed = (what: string): RunEvent =>
  ({ schemaVersion: 1, id: '', sequence: 0, type: 'system.changed', runId: '', sessionId: '', agentId: '', timestamp: new Date().toISOString(), payload: { what } }) as RunEvent;

describe('App live state', () => {
  it('shows broken profile files, and follows them on system.changed', async () => {
    const problems = [{ file: 'broken.toml', problem: 'line 1: expected a value' }];
    const api = createMemoryApi({ profileProblems: problems });
    location.hash = '#/settings';
    render(App, { api, settings: new SettingsState(api, host), workspaces: new WorkspacesState(api), review: new ReviewState(api) });
    const shown = await screen.findByTestId('profile-problems', {}, { timeout: 30_000 });
    expect(within(shown).getByTestId('profile-problem')).toHaveTextContent('broken.toml: line 1: expected a value');
    problems.length = 0; // the file was fixed
    api.emit([changed('profiles')]);
    await waitFor(() => expect(screen.queryByTestId('profile-problems')).toBeNull());
    location.hash = '';
  });

  it('marks a missing workspace and keeps the new-run form from starting in it', async () => {
    const ws: Workspace = { id: 'ws_1', name: 'gone', displayPath: '~/gone', addedAt: '2026-01-01T00:00:00Z', missing: true };
    const api = createMemoryApi({ workspaces: [ws] });
    location.hash = '#/new/ws_1';
    render(App, { api, settings: new SettingsState(api, host), workspaces: new WorkspacesState(api), review: new ReviewState(api) });
    await screen.findByTestId('new-run-workspace-missing', {}, { timeout: 30_000 });
    await fireEvent.input(screen.getByTestId('new-run-task'), { target: { value: 'look around' } });
    expect(screen.getByTestId('new-run-submit')).toBeDisabled();
    expect(screen.getByTestId('sidebar-workspace-missing')).toHaveTextContent('Folder missing');
    location.hash = '';
  });

  it('shows a lost stream at once with a reconnect button that connects again', async () => {
    const api = createMemoryApi();
    const subs: StreamHandlers[] = [];
    api.events.subscribe = (h) => {
      subs.push(h);
      queueMicrotask(() => h.onStatus?.('open'));
      return () => {};
    };
    render(App, { api, settings: new SettingsState(api, host), workspaces: new WorkspacesState(api), review: new ReviewState(api) });
    await waitFor(() => expect(subs).toHaveLength(1));
    expect(screen.queryByTestId('connection-lost')).toBeNull();
    subs[0]!.onStatus?.('reconnecting');
    const banner = await screen.findByTestId('connection-lost');
    expect(banner).toHaveAttribute('role', 'alert');
    await fireEvent.click(screen.getByTestId('connection-retry'));
    await waitFor(() => expect(subs).toHaveLength(2));
    await waitFor(() => expect(screen.queryByTestId('connection-lost')).toBeNull());
    // The replaced stream's late news is ignored.
    subs[0]!.onStatus?.('closed');
    await new Promise((r) => setTimeout(r, 50));
    expect(screen.queryByTestId('connection-lost')).toBeNull();
  });
});
