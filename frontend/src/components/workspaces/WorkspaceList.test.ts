import { fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { describe, expect, it } from 'vitest';
import { ApiError, type Workspace } from '../../lib/api';
import { createMemoryApi, type MemoryApiOptions } from '../../lib/api/memory';
import { WorkspacesState } from '../../lib/state/workspaces.svelte';
import WorkspaceList from './WorkspaceList.svelte';

const site: Workspace = { id: 'ws_a', name: 'site', displayPath: '~/src/site', addedAt: '2026-03-04T05:06:07.000Z' };

async function setup(o: MemoryApiOptions = {}) {
  const api = createMemoryApi(o);
  const workspaces = new WorkspacesState(api);
  render(WorkspaceList, { workspaces });
  const loading = screen.queryByTestId('workspaces-loading');
  await workspaces.load();
  return { api, workspaces, loading };
}

describe('WorkspaceList', () => {
  it('shows a skeleton, then the empty state that explains allowlisting', async () => {
    const { loading } = await setup();
    expect(loading).not.toBeNull();
    const empty = await screen.findByTestId('workspaces-empty');
    expect(empty).toHaveTextContent('Agents can only touch folders you add here');
    expect(screen.queryByTestId('workspaces-loading')).toBeNull();
    expect(screen.getByTestId('workspace-add')).toHaveTextContent('Add workspace…');
  });

  it('lists workspaces with name and display path', async () => {
    await setup({ workspaces: [site] });
    const row = await screen.findByTestId('workspace-row');
    expect(within(row).getByTestId('workspace-name')).toHaveTextContent('site');
    expect(within(row).getByTestId('workspace-path')).toHaveTextContent('~/src/site');
    expect(screen.queryByTestId('workspaces-empty')).toBeNull();
  });

  it('browser: adds through the inline path form', async () => {
    const { api } = await setup();
    await fireEvent.click(screen.getByTestId('workspace-add'));
    const input = screen.getByLabelText('Folder path');
    expect(input).toHaveFocus();
    expect(screen.getByTestId('workspace-add-submit')).toBeDisabled();
    await fireEvent.input(input, { target: { value: '  /home/u/projects/blog ' } });
    await fireEvent.click(screen.getByTestId('workspace-add-submit'));
    const row = await screen.findByTestId('workspace-row');
    expect(row).toHaveTextContent('blog');
    expect(api.calls.find((c) => c.method === 'workspaces.add')?.args).toEqual(['/home/u/projects/blog']);
    expect(screen.queryByTestId('workspace-add-form')).toBeNull();
  });

  it('browser: shows code, message and next step when adding fails, and keeps the form', async () => {
    const { api } = await setup();
    api.fail('workspaces.add', new ApiError({ code: 'invalid_input', message: 'this folder cannot be a workspace: not a directory', next: 'x' }));
    await fireEvent.click(screen.getByTestId('workspace-add'));
    await fireEvent.input(screen.getByLabelText('Folder path'), { target: { value: '/etc/passwd' } });
    await fireEvent.click(screen.getByTestId('workspace-add-submit'));
    const notice = await screen.findByTestId('error-notice');
    expect(notice).toHaveTextContent('this folder cannot be a workspace: not a directory');
    expect(notice).toHaveTextContent('Correct the input and try again.'); // localised by code
    expect(notice).toHaveTextContent('invalid_input');
    expect(screen.getByTestId('workspace-add-form')).toBeInTheDocument();
    expect(screen.queryByTestId('workspace-row')).toBeNull();
  });

  it('window: opens the native dialog and adds the chosen folder', async () => {
    const { api } = await setup({ pickDirectory: async () => '/home/u/code/api' });
    await fireEvent.click(screen.getByTestId('workspace-add'));
    expect(await screen.findByTestId('workspace-row')).toHaveTextContent('api');
    expect(api.calls.map((c) => c.method)).toEqual(['workspaces.list', 'workspaces.pickDirectory', 'workspaces.add']);
    expect(screen.queryByTestId('workspace-add-form')).toBeNull();
  });

  it('window: a cancelled dialog adds nothing', async () => {
    const { api } = await setup({ pickDirectory: async () => '' });
    await fireEvent.click(screen.getByTestId('workspace-add'));
    await waitFor(() => expect(screen.getByTestId('workspace-add')).not.toBeDisabled());
    expect(api.calls.map((c) => c.method)).not.toContain('workspaces.add');
    expect(screen.getByTestId('workspaces-empty')).toBeInTheDocument();
  });

  it('removes only after confirmation', async () => {
    const { api } = await setup({ workspaces: [site] });
    await fireEvent.click(await screen.findByTestId('workspace-remove'));
    expect(screen.getByText('Remove site from the allowlist? Its files stay on disk.')).toBeInTheDocument();
    await fireEvent.click(screen.getByRole('button', { name: 'Keep' }));
    expect(api.calls.map((c) => c.method)).not.toContain('workspaces.remove');

    await fireEvent.click(screen.getByTestId('workspace-remove'));
    await fireEvent.click(screen.getByTestId('workspace-remove-confirm'));
    expect(await screen.findByTestId('workspaces-empty')).toBeInTheDocument();
    expect(api.calls.find((c) => c.method === 'workspaces.remove')?.args).toEqual(['ws_a']);
  });

  it('a failed load shows the error with a retry', async () => {
    const api = createMemoryApi({ workspaces: [site] });
    api.fail('workspaces.list', new ApiError({ code: 'unreachable', message: '' }));
    const workspaces = new WorkspacesState(api);
    render(WorkspaceList, { workspaces });
    await workspaces.load();
    const notice = await screen.findByTestId('error-notice');
    expect(notice).toHaveTextContent('The AgentHub server did not answer');
    await fireEvent.click(within(notice).getByRole('button', { name: 'Try again' }));
    expect(await screen.findByTestId('workspace-row')).toBeInTheDocument();
  });
});
