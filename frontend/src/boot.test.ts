// The app starts whatever the address bar and the browser's storage hold:
// malformed percent-encoding in a hash (a pasted, truncated link), unknown
// routes, and corrupt or unreadable localStorage each fall back to a safe
// default instead of throwing before anything is on screen (issue 17 §3).
import { screen } from '@testing-library/svelte';
import { afterEach, describe, expect, it } from 'vitest';
import { createMemoryApi } from './lib/api/memory';
import { parsePage } from './lib/state/pages';
import { REMEMBER_KEY, SettingsState, type DisplayHost } from './lib/state/settings.svelte';
import { parseHash } from './lib/state/view';
import { start } from './start';

const MALFORMED = ['#/run/%E0%A4%A', '#/run/%', '#/new/%ZZ', '#/audit/run/%E0%A4%A', '#/%', '#%/run', '#/run/%C0%AF/x'];
const UNKNOWN = ['#/nope', '#/run', '#/settingsx', '#//', '#', '', '#/inbox/extra/%'];

afterEach(() => {
  document.body.innerHTML = '';
  history.replaceState(null, '', '/');
  localStorage.clear();
});

describe('reading the address', () => {
  it('never throws on malformed percent-encoding, and keeps the segment as written', () => {
    for (const h of MALFORMED) {
      expect(() => parseHash(h), h).not.toThrow();
      expect(() => parsePage(h), h).not.toThrow();
    }
    expect(parseHash('#/run/%E0%A4%A')).toEqual({ name: 'run', runId: '%E0%A4%A' });
    expect(parseHash('#/new/%ZZ')).toEqual({ name: 'new', workspaceId: '%ZZ' });
    expect(parseHash('#/run/run%5F1')).toEqual({ name: 'run', runId: 'run_1' }); // valid encoding still decodes
  });

  it('takes an unknown route as home', () => {
    for (const h of UNKNOWN) expect(parseHash(h), h).toEqual(h.startsWith('#/inbox') ? { name: 'inbox' } : { name: 'home' });
  });
});

describe('remembered display settings', () => {
  const host = (getItem: (k: string) => string | null): DisplayHost => ({
    applyTheme() {},
    systemDark: () => null,
    onSystemChange: () => () => {},
    storage: { getItem, setItem() {} },
  });

  it('falls back to the defaults for corrupt or unreadable values', () => {
    const corrupt = ['{', 'null', '"dark"', '[]', '42', '{"theme":7,"language":{}}', '{"theme":"neon","language":"xx"}', '\u0000'];
    for (const raw of corrupt) {
      const s = new SettingsState(createMemoryApi(), host(() => raw));
      expect([s.theme, s.language], raw).toEqual(['system', 'en']);
    }
    const blocked = new SettingsState(createMemoryApi(), host(() => {
      throw new DOMException('The operation is insecure.', 'SecurityError');
    }));
    expect([blocked.theme, blocked.language]).toEqual(['system', 'en']);
  });
});

describe('boot', () => {
  it('mounts the app for a malformed run address with corrupt storage', async () => {
    localStorage.setItem(REMEMBER_KEY, '{"theme":');
    localStorage.setItem('agenthub.diff.mode', '\u0000garbage');
    history.replaceState(null, '', '/#/run/%E0%A4%A');
    document.body.innerHTML = '<div id="app"></div>';
    expect(() => start(createMemoryApi())).not.toThrow();
    // The shell is up: its navigation renders, and the run view shows the
    // id as written (it is simply not found).
    await screen.findByTestId('nav-settings');
    expect(document.querySelector('[data-testid="run-view"]')?.getAttribute('data-run-id')).toBe('%E0%A4%A');
  });

  it('mounts the app for an unknown route', async () => {
    history.replaceState(null, '', '/#/no/such/page');
    document.body.innerHTML = '<div id="app"></div>';
    expect(() => start(createMemoryApi())).not.toThrow();
    await screen.findByTestId('nav-settings');
  });
});
