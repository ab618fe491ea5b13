// The global action keys and the help overlay (issue 21): ? lists every key
// of lib/state/keys.ts, each global key in that table does what it says,
// [ folds the sidebar and the fold is remembered, and a key typed into a
// text box is text, not a shortcut.
import { fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import { describe, expect, it } from 'vitest';
import App from './App.svelte';
import { createMemoryApi } from './lib/api/memory';
import { GLOBAL_KEYS, KEYMAP } from './lib/state/keys';
import { ReviewState } from './lib/state/review.svelte';
import { SettingsState, type DisplayHost } from './lib/state/settings.svelte';
import { WorkspacesState } from './lib/state/workspaces.svelte';

const host: DisplayHost = { applyTheme: () => {}, systemDark: () => false, onSystemChange: () => () => {}, storage: null };

function setup() {
  const api = createMemoryApi({ info: { version: '1', home: '~/x', mode: 'browser' } });
  render(App, { api, settings: new SettingsState(api, host), workspaces: new WorkspacesState(api), review: new ReviewState(api) });
}

describe('App keys', () => {
  it('? opens the help overlay with every key of the table; Escape closes it', async () => {
    setup();
    await fireEvent.keyDown(window, { key: '?' });
    const help = await screen.findByTestId('help-overlay');
    const rows = help.querySelectorAll('[data-testid="help-key"]');
    expect(rows).toHaveLength(KEYMAP.reduce((n, s) => n + s.keys.length, 0));
    await fireEvent.keyDown(help, { key: 'Escape' });
    await waitFor(() => expect(screen.queryByTestId('help-overlay')).toBeNull());
    await fireEvent.click(screen.getByTestId('help-open'));
    expect(await screen.findByTestId('help-overlay')).toBeInTheDocument();
  });

  it('each global key is handled', async () => {
    setup();
    const at = () => location.hash;
    await fireEvent.keyDown(window, { key: GLOBAL_KEYS.inbox });
    await waitFor(() => expect(at()).toBe('#/inbox'));
    await fireEvent.keyDown(window, { key: GLOBAL_KEYS.newRun });
    await waitFor(() => expect(at()).toBe('#/new'));
    await fireEvent.keyDown(window, { key: GLOBAL_KEYS.audit });
    await waitFor(() => expect(at()).toBe('#/audit'));
    await fireEvent.keyDown(window, { key: GLOBAL_KEYS.settings });
    await waitFor(() => expect(at()).toBe('#/settings'));
    await fireEvent.keyDown(window, { key: GLOBAL_KEYS.home });
    await waitFor(() => expect(at()).toBe('#/'));
    const toggle = screen.getByTestId('sidebar-toggle');
    expect(toggle).toHaveAttribute('aria-expanded', 'true');
    await fireEvent.keyDown(window, { key: GLOBAL_KEYS.sidebar });
    await waitFor(() => expect(toggle).toHaveAttribute('aria-expanded', 'false'));
    expect(localStorage.getItem('agenthub.sidebarHidden')).toBe('1');
    await fireEvent.click(toggle);
    await waitFor(() => expect(toggle).toHaveAttribute('aria-expanded', 'true'));
    expect(localStorage.getItem('agenthub.sidebarHidden')).toBe('0');
  });

  it('a key typed into a text box is text', async () => {
    setup();
    await fireEvent.keyDown(window, { key: GLOBAL_KEYS.newRun });
    await waitFor(() => expect(location.hash).toBe('#/new'));
    await fireEvent.click(screen.getByTestId('search-open'));
    const input = await screen.findByTestId('search-input');
    await fireEvent.keyDown(input, { key: GLOBAL_KEYS.inbox });
    await fireEvent.keyDown(input, { key: '?' });
    expect(location.hash).toBe('#/new');
    expect(screen.queryByTestId('help-overlay')).toBeNull();
  });
});
