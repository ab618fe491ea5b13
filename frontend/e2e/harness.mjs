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

