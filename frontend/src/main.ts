// Entry point. Svelte 5 mounts with mount() (new App() leaves the Wails
// window blank). The remembered theme and language are applied before the
// first paint, so nothing flashes or changes size once the API answers.
import { mount } from 'svelte';
import './app.css';
import App from './App.svelte';
import { createApi } from './lib/api';
import { ReviewState } from './lib/state/review.svelte';
import { SettingsState } from './lib/state/settings.svelte';
import { WorkspacesState } from './lib/state/workspaces.svelte';

const api = createApi();
const settings = new SettingsState(api);
const workspaces = new WorkspacesState(api);
const review = new ReviewState(api);

mount(App, {
  target: document.getElementById('app')!,
  props: { api, settings, workspaces, review },
});
