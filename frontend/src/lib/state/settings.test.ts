import { describe, expect, it } from 'vitest';
import { ApiError } from '../api';
import { createMemoryApi } from '../api/memory';
import { getLocale } from '../i18n';
import { REMEMBER_KEY, SettingsState, type DisplayHost } from './settings.svelte';

function fakeHost(opts: { dark?: boolean | null; remembered?: string } = {}) {
  const store = new Map<string, string>();
  if (opts.remembered) store.set(REMEMBER_KEY, opts.remembered);
  const applied: string[] = [];
  let listener: ((dark: boolean) => void) | null = null;
  const host: DisplayHost = {
    applyTheme: (resolved, choice) => applied.push(`${resolved}/${choice}`),
    systemDark: () => opts.dark ?? null,
    onSystemChange: (cb) => {
      listener = cb;
      return () => (listener = null);
    },
    storage: { getItem: (k) => store.get(k) ?? null, setItem: (k, v) => void store.set(k, v) },
  };
  return { host, applied, store, setSystemDark: (d: boolean) => listener?.(d) };
}

describe('SettingsState', () => {
  it('loads the saved settings and applies theme and language', async () => {
    const api = createMemoryApi({ settings: { theme: 'dark', language: 'zh-CN' } });
    const h = fakeHost();
    const s = new SettingsState(api, h.host);
    await s.load();
    expect([s.status, s.theme, s.language, s.resolvedTheme]).toEqual(['ready', 'dark', 'zh-CN', 'dark']);
    expect(h.applied.at(-1)).toBe('dark/dark');
    expect(getLocale()).toBe('zh-CN');
    expect(document.documentElement.lang).toBe('zh-CN');
    expect(JSON.parse(h.store.get(REMEMBER_KEY)!)).toEqual({ theme: 'dark', language: 'zh-CN' });
  });

  it('paints the remembered choice before the API answers', () => {
    const h = fakeHost({ remembered: JSON.stringify({ theme: 'light', language: 'zh-CN' }) });
    const s = new SettingsState(createMemoryApi(), h.host);
    expect(h.applied).toEqual(['light/light']);
    expect(s.language).toBe('zh-CN');
  });

  it('ignores a corrupt remembered value', () => {
    const h = fakeHost({ remembered: '{"theme":"neon","language":"xx"}' });
    const s = new SettingsState(createMemoryApi(), h.host);
    expect([s.theme, s.language]).toEqual(['system', 'en']);
  });

  it('applies a change instantly and saves both fields', async () => {
    const api = createMemoryApi();
    const h = fakeHost({ dark: false });
    const s = new SettingsState(api, h.host);
    await s.load();
    const saving = s.setTheme('dark');
    expect(h.applied.at(-1)).toBe('dark/dark'); // before the save resolves
    await saving;
    await s.setLanguage('zh-CN');
    expect(api.calls.filter((c) => c.method === 'settings.set').map((c) => c.args[0])).toEqual([
      { theme: 'dark', language: 'en' },
      { theme: 'dark', language: 'zh-CN' },
    ]);
    expect(await api.settings.get()).toEqual({ theme: 'dark', language: 'zh-CN' });
  });

  it('reverts and shows the error when saving fails', async () => {
    const api = createMemoryApi({ settings: { theme: 'light', language: 'en' } });
    const h = fakeHost();
    const s = new SettingsState(api, h.host);
    await s.load();
    api.fail('settings.set', new ApiError({ code: 'internal_error', message: 'disk full' }));
    await s.setTheme('dark');
    expect(s.theme).toBe('light');
    expect(h.applied.at(-1)).toBe('light/light');
    expect(s.error?.code).toBe('internal_error');
  });

  it('follows the system preference while the choice is "system"', async () => {
    const h = fakeHost({ dark: false });
    const s = new SettingsState(createMemoryApi(), h.host);
    await s.load();
    expect(s.resolvedTheme).toBe('light');
    h.setSystemDark(true);
    expect(s.resolvedTheme).toBe('dark');
    expect(h.applied.at(-1)).toBe('dark/system');
    s.dispose();
  });

  it('keeps defaults and reports the error when loading fails', async () => {
    const api = createMemoryApi();
    api.fail('settings.get', new ApiError({ code: 'unauthorized', message: 'missing token' }));
    const s = new SettingsState(api, fakeHost().host);
    await s.load();
    expect([s.status, s.error?.code, s.theme]).toEqual(['error', 'unauthorized', 'system']);
  });
});
