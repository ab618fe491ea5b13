// The settings page's "Local models" section over the memory api, in the
// shell as App.pages.test.ts does it: detected servers with their models,
// the empty state, refresh, the profile to copy, errors, and Chinese.
import { fireEvent, render, screen, waitFor, within } from '@testing-library/svelte';
import { afterEach, describe, expect, it, vi } from 'vitest';
import App from '../../App.svelte';
import { ApiError, type LocalServer } from '../../lib/api';
import { createMemoryApi, type MemoryApiOptions } from '../../lib/api/memory';
import { setLocale } from '../../lib/i18n';
import { profileFileName, profileToml } from '../../lib/state/localmodels.svelte';
import { ReviewState } from '../../lib/state/review.svelte';
import { SettingsState, type DisplayHost } from '../../lib/state/settings.svelte';
import { WorkspacesState } from '../../lib/state/workspaces.svelte';

const ollama: LocalServer = { kind: 'ollama', label: 'Ollama', baseUrl: 'http://127.0.0.1:11434/v1', models: ['llama3.2:1b', 'qwen3:0.6b'] };
const vllm: LocalServer = { kind: 'vllm', label: 'vLLM', baseUrl: 'http://127.0.0.1:8000/v1', models: [] };

const host = (): DisplayHost => ({ applyTheme: () => {}, systemDark: () => false, onSystemChange: () => () => {}, storage: null });

function setup(o: MemoryApiOptions = {}) {
  history.replaceState(null, '', '/#/settings');
  const api = createMemoryApi(o);
  render(App, { api, settings: new SettingsState(api, host()), workspaces: new WorkspacesState(api), review: new ReviewState(api) });
  return api;
}

afterEach(() => {
  history.replaceState(null, '', '/');
  setLocale('en');
  vi.unstubAllGlobals();
});

describe('local models in settings', () => {
  it('lists each server found on loopback with its base URL and models', async () => {
    const api = setup({ localServers: [ollama, vllm] });
    const section = await screen.findByTestId('local-models');
    expect(within(section).getByRole('heading', { level: 2 })).toHaveTextContent('Local models');
    const servers = await within(section).findAllByTestId('local-server');
    expect(servers.map((s) => s.dataset.kind)).toEqual(['ollama', 'vllm']);
    expect(within(servers[0]!).getByRole('heading', { level: 3 })).toHaveTextContent('Ollama');
    expect(within(servers[0]!).getByTestId('local-server-url')).toHaveTextContent('http://127.0.0.1:11434/v1');
    const models = within(servers[0]!).getAllByTestId('local-model');
    expect(models.map((m) => m.dataset.model)).toEqual(['llama3.2:1b', 'qwen3:0.6b']);
    expect(within(servers[1]!).getByTestId('local-server-no-models')).toHaveTextContent('No model installed or loaded.');
    expect(api.calls.filter((c) => c.method === 'system.localModels')).toHaveLength(1);
  });

  it('says clearly when nothing answers, and refreshes on request', async () => {
    const api = setup();
    const empty = await screen.findByTestId('local-models-empty');
    expect(empty).toHaveTextContent('No local model server found on loopback');
    expect(empty).toHaveTextContent('Ollama (port 11434)');

    // A server starts; Refresh probes again.
    (api.system as { localModels: () => Promise<LocalServer[]> }).localModels = async () => [ollama];
    await fireEvent.click(screen.getByTestId('local-models-refresh'));
    expect(await screen.findByTestId('local-server')).toHaveAttribute('data-kind', 'ollama');
    expect(screen.queryByTestId('local-models-empty')).toBeNull();
  });

  it('copies a native profile for a model, with the file name to save it as', async () => {
    const writeText = vi.fn(async () => {});
    vi.stubGlobal('navigator', { ...navigator, clipboard: { writeText } });
    setup({ localServers: [ollama] });
    const model = (await screen.findAllByTestId('local-model'))[1]!;
    await fireEvent.click(within(model).getByRole('button', { name: 'Copy profile for qwen3:0.6b' }));
    expect(writeText).toHaveBeenCalledWith(
      'name = "qwen3-0.6b"\nruntime = "native"\nprovider = "openai"\nbase_url = "http://127.0.0.1:11434/v1"\nmodel = "qwen3:0.6b"\n',
    );
    await waitFor(() => expect(model).toHaveTextContent('Copied: save it as profiles/qwen3-0.6b.toml'));
  });

  it('falls back to the text shown when the clipboard refuses', async () => {
    vi.stubGlobal('navigator', { ...navigator, clipboard: { writeText: async () => Promise.reject(new Error('denied')) } });
    setup({ localServers: [ollama] });
    const model = (await screen.findAllByTestId('local-model'))[0]!;
    await fireEvent.click(within(model).getByTestId('local-model-copy'));
    await waitFor(() => expect(model).toHaveTextContent('Could not copy: use the base URL and model name shown.'));
  });

  it('shows an API failure with its code and a retry', async () => {
    const api = setup({ localServers: [ollama] });
    await screen.findByTestId('local-server');
    api.fail('system.localModels', new ApiError({ code: 'internal_error', message: 'boom' }));
    await fireEvent.click(screen.getByTestId('local-models-refresh'));
    const section = screen.getByTestId('local-models');
    await waitFor(() => expect(within(section).getByTestId('error-notice')).toHaveAttribute('data-code', 'internal_error'));
  });

  it('speaks Chinese', async () => {
    setup({ settings: { theme: 'light', language: 'zh-CN' } });
    await waitFor(() => expect(screen.getByTestId('local-models-empty')).toHaveTextContent('在回环地址上未找到本地模型服务'));
    expect(screen.getByTestId('local-models-refresh')).toHaveTextContent('刷新');
    expect(within(screen.getByTestId('local-models')).getByRole('heading', { level: 2 })).toHaveTextContent('本地模型');
  });
});

describe('profileToml and profileFileName', () => {
  it('quote what they are given', () => {
    expect(profileToml({ ...ollama, baseUrl: 'http://127.0.0.1:1/v1' }, 'a"b')).toContain('model = "a\\"b"');
    expect(profileFileName('Qwen/Qwen2.5-Coder:7B')).toBe('qwen-qwen2.5-coder-7b.toml');
    expect(profileFileName('::')).toBe('local.toml');
    expect(profileFileName('_x' + 'y'.repeat(80))).toBe(`x${'y'.repeat(63)}.toml`);
  });
});
