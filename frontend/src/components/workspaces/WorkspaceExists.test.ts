// Issue 21: in the window, adding a folder that is already a workspace said
// "[object Object]" internal_error. Now it is workspace_exists with its own
// title, cause and a "Choose another folder" button that opens the picker
// again; in the browser the button puts the path back in the form.
import { fireEvent, render, screen, within } from '@testing-library/svelte';
import { describe, expect, it } from 'vitest';
import { toApiError, type Workspace } from '../../lib/api';
import { createMemoryApi } from '../../lib/api/memory';
import { WorkspacesState } from '../../lib/state/workspaces.svelte';
import WorkspaceList from './WorkspaceList.svelte';

const site: Workspace = { id: 'ws_a', name: 'site', displayPath: '/home/u/site', addedAt: '2026-03-04T05:06:07.000Z' };

describe('adding a folder that is already a workspace', () => {
  it('window: says so and offers to choose another folder, which opens the picker again', async () => {
    const picked = ['/home/u/site', '/home/u/blog'];
    const api = createMemoryApi({ workspaces: [site], pickDirectory: async () => picked.shift() ?? '' });
    const workspaces = new WorkspacesState(api);
    render(WorkspaceList, { workspaces });
    await workspaces.load();
    await fireEvent.click(screen.getByTestId('workspace-add'));
    const notice = await screen.findByTestId('error-notice');
    expect(notice).toHaveAttribute('data-code', 'workspace_exists');
    expect(within(notice).getByTestId('error-title')).toHaveTextContent('This folder is already a workspace');
    expect(notice).not.toHaveTextContent('[object Object]');
    await fireEvent.click(within(notice).getByTestId('error-action'));
    expect(await screen.findByText('blog')).toBeTruthy();
    expect(api.calls.filter((c) => c.method === 'workspaces.pickDirectory')).toHaveLength(2);
  });

  it('the window transport turns the rejection Wails sends into the code, not [object Object]', () => {
    // The Wails runtime rejects with new Error(value); the Go side sends
    // the body as JSON text (app.formatError), which the page parses.
    const body = JSON.stringify({ code: 'workspace_exists', message: 'workspace ~/site is already in the allowlist', next: 'n', retryable: false });
    expect(toApiError(new Error(body)).code).toBe('workspace_exists');
  });
});
