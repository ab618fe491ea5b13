/// <reference types="vitest/config" />
import { writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { defineConfig, type Plugin } from 'vite';
import { svelte } from '@sveltejs/vite-plugin-svelte';
import { svelteTesting } from '@testing-library/svelte/vite';

// The Go binary embeds `all:frontend/dist`, and a fresh clone must compile
// before the frontend is built, so dist/.gitkeep is tracked. Vite empties
// dist on every build; this puts the placeholder back.
function keepGitkeep(): Plugin {
  return {
    name: 'agenthub-keep-gitkeep',
    apply: 'build',
    writeBundle(options) {
      writeFileSync(resolve(options.dir ?? 'dist', '.gitkeep'), '');
    },
  };
}

// main.ts loads the app (start.ts) with import() so that it can ask for the
// run's first page before the app is parsed; this has the page fetch that
// chunk alongside the entry instead of after it.
function preloadApp(): Plugin {
  return {
    name: 'agenthub-preload-app',
    apply: 'build',
    transformIndexHtml: {
      order: 'post',
      handler(_html, ctx) {
        const app = Object.values(ctx.bundle ?? {}).find(
          (c) => c.type === 'chunk' && c.isDynamicEntry && c.facadeModuleId?.endsWith('/src/start.ts'),
        );
        if (!app) throw new Error('preloadApp: no chunk for src/start.ts');
        return [{ tag: 'link', attrs: { rel: 'modulepreload', crossorigin: true, href: `./${app.fileName}` }, injectTo: 'head' }];
      },
    },
  };
}

export default defineConfig({
  // Relative asset URLs work both in the Wails asset server and behind
  // `agenthub serve` at `/?token=…`.
  base: './',
  plugins: [svelte(), svelteTesting(), keepGitkeep(), preloadApp()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // The desktop webview loads from disk; one small chunk beats many.
    chunkSizeWarningLimit: 300,
    // One stylesheet, linked from index.html, for the entry and the app
    // chunk main.ts loads: the app never paints before its styles are in.
    cssCodeSplit: false,
  },
  server: { host: '127.0.0.1', port: 5173, strictPort: true },
  test: {
    environment: 'jsdom',
    include: ['src/**/*.test.ts'],
    setupFiles: ['./src/test-setup.ts'],
    restoreMocks: true,
    // Above the 30 s async-wait default of src/test-setup.ts: a test waits for
    // its condition on a loaded machine instead of timing out at vitest's 5 s.
    testTimeout: 60_000,
  },
});
