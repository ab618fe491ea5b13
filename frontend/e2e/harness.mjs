// Shared harness of the browser end-to-end tests: the real `agenthub serve`
// binary on a random loopback port, and where its artifacts go.
import { spawn } from 'node:child_process';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const FRONTEND = fileURLToPath(new URL('..', import.meta.url));
export const BIN = resolve(FRONTEND, process.env.AGENTHUB_BIN ?? '../build/bin/agenthub');
export const ARTIFACTS = resolve(FRONTEND, process.env.E2E_ARTIFACTS ?? 'test-results');
export const CHROMIUM = process.env.CHROMIUM ?? '/usr/bin/chromium';
export const URL_LINE = /(http:\/\/127\.0\.0\.1:(\d+)\/\?token=([A-Za-z0-9_-]+))/;

/**
 * Starts `agenthub serve` over home. It probes no local model server unless
 * env sets AGENTHUB_LOCAL_SERVERS (KIND=URL,…), so what a model server on
 * this machine happens to run never shows in a test.
 */
export function startServer(home, env = {}) {
  return new Promise((resolvePromise, reject) => {
    const proc = spawn(BIN, ['serve', '--addr', '127.0.0.1:0', '--home', home], {
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, AGENTHUB_HOME: '', AGENTHUB_LOCAL_SERVERS: 'none', ...env },
    });
    let out = '';
    let err = '';
    const timer = setTimeout(() => {
      proc.kill('SIGKILL');
      reject(new Error(`no URL printed within 30 s.\nstdout: ${out}\nstderr: ${err}`));
    }, 30_000);
    proc.stdout.setEncoding('utf8').on('data', (chunk) => {
      out += chunk;
      const m = URL_LINE.exec(out);
      if (m) {
        clearTimeout(timer);
        resolvePromise({ proc, url: m[1], origin: `http://127.0.0.1:${m[2]}`, token: m[3] });
      }
    });
    proc.stderr.setEncoding('utf8').on('data', (chunk) => (err += chunk));
    proc.on('error', (e) => {
      clearTimeout(timer);
      reject(new Error(`cannot start ${BIN}: ${e.message}`));
    });
    proc.on('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`agenthub serve exited (${code}) before printing its URL.\nstdout: ${out}\nstderr: ${err}`));
    });
  });
}

export async function stopServer(server) {
  const { proc } = server;
  if (proc.exitCode !== null || proc.signalCode !== null) return;
  const exited = new Promise((r) => proc.once('exit', r));
  proc.kill('SIGTERM');
  const timer = setTimeout(() => proc.kill('SIGKILL'), 5_000);
  await exited;
  clearTimeout(timer);
}

/**
 * A fresh data directory with one playbook profile (`name`; `extra` lines are
 * added to its profile file, e.g. an executor), `agenthub serve` over it and
 * a headless Chromium: what every test that drives a scripted run through the
 * page sets up. close() stops both and removes the scratch directory.
 */
export async function playbookSession(name, playbook, { extra = '', viewport = { width: 1280, height: 820 } } = {}) {
  const { mkdir, mkdtemp, rm, writeFile } = await import('node:fs/promises');
  const { tmpdir } = await import('node:os');
  const { join } = await import('node:path');
  const { chromium } = await import('playwright-core');
  const scratch = await mkdtemp(join(tmpdir(), `agenthub-${name}-`));
  await mkdir(ARTIFACTS, { recursive: true });
  const home = join(scratch, 'home');
  await mkdir(join(home, 'profiles'), { recursive: true });
  await writeFile(join(home, 'profiles', `${name}.playbook.toml.txt`), playbook);
  await writeFile(join(home, 'profiles', `${name}.toml`), `name = "${name}"\nruntime = "script"\nplaybook = "${name}.playbook.toml.txt"\n${extra}`);
  const server = await startServer(home);
  const context = await chromium.launchPersistentContext(join(scratch, 'profile'), {
    executablePath: CHROMIUM,
    headless: true,
    viewport,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });
  return {
    scratch,
    server,
    context,
    /** Calls the API with the session's token. */
    api: (path, init = {}) =>
      fetch(server.origin + path, { ...init, headers: { Authorization: `Bearer ${server.token}`, 'Content-Type': 'application/json', ...init.headers } }),
    async close() {
      await context.close();
      await stopServer(server);
      await rm(scratch, { recursive: true, force: true });
    },
  };
}
