import { fireEvent, render, screen, waitFor } from '@testing-library/svelte';
import { describe, expect, it } from 'vitest';
import App from './App.svelte';
import { createMemoryApi } from './lib/api/memory';
import { ReviewState } from './lib/state/review.svelte';
import { SettingsState, type DisplayHost } from './lib/state/settings.svelte';
import { WorkspacesState } from './lib/state/workspaces.svelte';

function host(): DisplayHost & { theme: string } {
  const h = {
    theme: '',
    applyTheme(resolved: 'light' | 'dark') {
      h.theme = resolved;
    },
    systemDark: () => false,
    onSystemChange: () => () => {},
    storage: null,
  };
  return h;
}

describe('App', () => {
  it('renders the first screen and switches language and theme in place', async () => {
    const api = createMemoryApi({ info: { version: '1.2.3', home: '~/.local/share/agenthub', mode: 'browser' } });
    const h = host();
    const settings = new SettingsState(api, h);
    const workspaces = new WorkspacesState(api);
    const review = new ReviewState(api);
    render(App, { api, settings, workspaces, review });

    expect(document.title).toBe('AgentHub');
    expect(screen.getByTestId('app-name')).toHaveTextContent('AgentHub');
    const empty = await screen.findByTestId('workspaces-empty');
    expect(await screen.findByText('Version 1.2.3')).toBeInTheDocument();

    await fireEvent.click(screen.getByLabelText('中文'));
    await waitFor(() => expect(screen.getByRole('heading', { level: 2 })).toHaveTextContent('工作区'));
    expect(screen.getByTestId('workspace-add')).toHaveTextContent('添加工作区…');
    // Same node: the list was re-rendered in place, not remounted.
    expect(screen.getByTestId('workspaces-empty')).toBe(empty);

    await fireEvent.click(screen.getByLabelText('深色'));
    expect(h.theme).toBe('dark');
    await waitFor(() => expect(api.calls.filter((c) => c.method === 'settings.set')).toHaveLength(2));
    expect(await api.settings.get()).toEqual({ theme: 'dark', language: 'zh-CN' });

    await fireEvent.click(screen.getByLabelText('English'));
    await waitFor(() => expect(screen.getByRole('heading', { level: 2 })).toHaveTextContent('Workspaces'));
  });
});
