import { describe, expect, it } from 'vitest';
import { createApi, detectTransport, takeToken } from './index';

function fakeHistory() {
  const urls: string[] = [];
  return {
    urls,
    history: { state: null, replaceState: (_s: unknown, _t: string, url?: string | URL | null) => urls.push(String(url)) } as unknown as History,
  };
}

describe('detectTransport', () => {
  it.each([
    ['window.go present', { go: {} }, 'wails'],
    ['window.runtime present', { runtime: { EventsOn: () => () => {} } }, 'wails'],
    ['neither', {}, 'http'],
  ])('%s → %s', (_name, win, want) => {
    expect(detectTransport(win as never)).toBe(want);
  });
});

describe('takeToken', () => {
  it('reads the token and removes it from the address bar, keeping the rest', () => {
    const h = fakeHistory();
    const token = takeToken({ href: 'http://127.0.0.1:4000/?token=s3cr3t&x=1#runs' } as Location, h.history);
    expect(token).toBe('s3cr3t');
    expect(h.urls).toEqual(['/?x=1#runs']);
  });

  it('leaves a URL without a token alone', () => {
    const h = fakeHistory();
    expect(takeToken({ href: 'http://127.0.0.1:4000/' } as Location, h.history)).toBe('');
    expect(h.urls).toEqual([]);
  });
});

describe('createApi', () => {
  it('uses the Wails bindings when window.go exists', async () => {
    const calls: string[] = [];
    const win = {
      go: { api: { WorkspacesAPI: { List: async () => (calls.push('List'), [{ id: 'ws_1', name: 'a', displayPath: '~/a', addedAt: '' }]) } } },
      runtime: { EventsOn: () => () => {} },
      location: { href: 'wails://wails/' },
      history: fakeHistory().history,
    };
    const api = createApi(win as never);
    expect(api.transport).toBe('wails');
    expect(typeof api.workspaces.pickDirectory).toBe('function');
    expect(await api.workspaces.list()).toHaveLength(1);
    expect(calls).toEqual(['List']);
  });

  it('uses HTTP in a browser, with the token taken from the URL', () => {
    const h = fakeHistory();
    const api = createApi({ location: { href: 'http://127.0.0.1:4000/?token=abc' }, history: h.history } as never);
    expect(api.transport).toBe('http');
    expect(api.workspaces.pickDirectory).toBeUndefined();
    expect(h.urls).toEqual(['/']);
  });
});
