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

export default defineConfig({
  // Relative asset URLs work both in the Wails asset server and behind
  // `agenthub serve` at `/?token=…`.
  base: './',
  plugins: [svelte(), svelteTesting(), keepGitkeep()],
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    target: 'es2022',
    // The desktop webview loads from disk; one small chunk beats many.
    chunkSizeWarningLimit: 300,
  },
  server: { host: '127.0.0.1', port: 5173, strictPort: true },
  test: {
    environment: 'jsdom',
    include: ['src/**/*.test.ts'],
    setupFiles: ['./src/test-setup.ts'],
    restoreMocks: true,
  },
});
