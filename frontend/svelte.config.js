import { vitePreprocess } from '@sveltejs/vite-plugin-svelte';

/** Runes are enforced: Svelte 4 syntax (`export let`, `$:`) is a build error. */
export default {
  preprocess: vitePreprocess(),
  compilerOptions: { runes: true },
};
