// The only module that knows about transports. Everything else imports from
// here: the Api interface, its types, ApiError, and the context helpers.
import { getContext, setContext } from 'svelte';
import type { Api, TransportKind } from './contract';
import { createHttpApi } from './http';
import { createWailsApi, type WailsWindow } from './wails';

export type * from './contract';
export type * from './types';
export type * from './history';
export type * from './changes';
export type * from './conflicts';
export type * from './artifacts';
export { ARTIFACT_KINDS } from './artifacts';
export { THEMES, LOCALES } from './types';
// The vocabulary generated from Go (generated.ts); its types come through types.ts.
export {
  ACTION_KINDS,
  ALWAYS_ASKS,
  APPROVING_DECISIONS,
  COARSE,
  DECISION_KINDS,
  DEFAULT_GATE,
  EVENT_TYPES,
  EventTypes,
  FAILURE_CODES,
  RECOVERY,
  RUN_STATES,
  RUN_TRANSITIONS,
  TERMINAL_EVENTS,
  TERMINAL_STATES,
} from './generated';
export { ApiError, toApiError, CLIENT_CODES } from './error';
export { Sequencer } from './sequencer';

type HostWindow = WailsWindow & Pick<Window, 'location' | 'history'>;

/** Wails injects window.go / window.runtime into the desktop webview only. */
export function detectTransport(win: WailsWindow): TransportKind {
  return typeof win.go === 'object' || typeof win.runtime === 'object' ? 'wails' : 'http';
}

/**
 * Reads `?token=` from the address bar, then removes it with replaceState so
 * the token does not linger in the visible URL, history or bookmarks. The
 * server has already set the session cookie; the token stays in memory for
 * the Authorization header.
 */
export function takeToken(loc: Location, hist: History): string {
  const url = new URL(loc.href);
  const token = url.searchParams.get('token') ?? '';
  if (token) {
    url.searchParams.delete('token');
    hist.replaceState(hist.state, '', url.pathname + url.search + url.hash);
  }
  return token;
}

/** Builds the Api for the page it runs in. */
export function createApi(win: HostWindow = window as unknown as HostWindow): Api {
  if (detectTransport(win) === 'wails') return createWailsApi(win);
  return createHttpApi({ token: takeToken(win.location, win.history) });
}

const KEY = Symbol('agenthub.api');

/** Makes api available to every component below the caller. */
export function provideApi(api: Api): void {
  setContext(KEY, api);
}

/** The Api provided by an ancestor (App.svelte, or a test). */
export function useApi(): Api {
  const api = getContext<Api | undefined>(KEY);
  if (!api) throw new Error('useApi: no Api provided; call provideApi in an ancestor');
  return api;
}

export const API_CONTEXT_KEY = KEY;
export { followEvents, type Follower, type FollowOptions } from './follow';
export { prefetchEvents } from './prefetch';
