// The app proper, a chunk of its own that main.ts loads: the state classes
// and the shell. The remembered theme and language are applied (in
// SettingsState) before the app is mounted, so nothing flashes or changes
// size once the API answers.
import { mount } from 'svelte';
import App from './App.svelte';
import type { Api } from './lib/api';
import { parseHash, ReviewState } from './lib/state/review.svelte';
import { SettingsState } from './lib/state/settings.svelte';
import { WorkspacesState } from './lib/state/workspaces.svelte';

export function start(api: Api): void {
  const settings = new SettingsState(api);
  const workspaces = new WorkspacesState(api);
  const review = new ReviewState(api);
  // The view the address names, from the first render on (App reads the
  // address again once mounted): a run opens without rendering home first.
  review.go(parseHash(location.hash));
  mount(App, {
    target: document.getElementById('app')!,
    props: { api, settings, workspaces, review },
  });
}
