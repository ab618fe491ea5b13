// End-to-end resume: a demo run is killed with the engine that runs it
// (SIGKILL while it runs; `serve` is only a client of the engine, and runs
// outlive it), the server starts again on the same data directory, the run shows
// as interrupted with "Resume from last checkpoint", and resuming opens a new
// run that carries on to its first approval. Env as review.test.mjs.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { checkA11y } from './a11y.mjs';
import { ARTIFACTS, BIN, CHROMIUM, startServer, stopServer } from './harness.mjs';

let scratch = '';
/** @type {import('playwright-core').BrowserContext} */
let context;
let server;

const call = (path, init = {}) =>
  fetch(server.origin + path, {
    ...init,
    headers: { Authorization: `Bearer ${server.token}`, 'Content-Type': 'application/json', ...(init.headers ?? {}) },
  });

before(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'agenthub-resume-'));
  await mkdir(ARTIFACTS, { recursive: true });
});

after(async () => {
  await context?.close();
  if (server) await stopServer(server);
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

/** Polls a run until pred holds (at most 15 s). */
async function until(runId, pred) {
  for (let i = 0; i < 300; i++) {
    const run = await (await call(`/api/runs/${runId}`)).json();
    if (pred(run)) return run;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`run ${runId} never reached the expected state`);
}

test('a run interrupted by a crash resumes from its last checkpoint', async () => {
  const home = join(scratch, 'home');
  const dir = join(scratch, 'ws');
  await mkdir(dir);
  const git = (...args) => execFileSync('git', ['-c', 'user.name=e2e', '-c', 'user.email=e2e@example.com', ...args], { cwd: dir });
  git('init', '-q');
  await writeFile(join(dir, 'README.md'), '# Resume test\n');
  git('add', 'README.md');
  git('commit', '-q', '-m', 'init');

  // The first server dies while the run is active.
  server = await startServer(home);
  const ws = await (await call('/api/workspaces', { method: 'POST', body: JSON.stringify({ path: dir }) })).json();
  const started = await (await call('/api/runs', { method: 'POST', body: JSON.stringify({ workspaceId: ws.id, task: 'Tour, then crash' }) })).json();
  await until(started.id, (r) => r.state === 'Running');
  const engine = JSON.parse(execFileSync(BIN, ['engine', 'status', '--json', '--home', home], { encoding: 'utf8' }));
  process.kill(engine.pid, 'SIGKILL');
  await stopServer(server);

  // The second one finds it interrupted.
  server = await startServer(home);
  const interrupted = await until(started.id, (r) => r.state === 'Failed');
  assert.equal(interrupted.failure?.code, 'run_interrupted');
  assert.equal(interrupted.resumable, true);

  context = await chromium.launchPersistentContext(join(scratch, 'profile'), {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 820 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  const page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(20_000);
  await page.goto(server.url);
  await page.getByTestId('app-name').waitFor();
  await page.getByTestId('language-en').click();
  await page.getByTestId('theme-light').click();
  await page.locator('[data-testid="run-row"]').filter({ hasText: 'Tour, then crash' }).click();
  await page.locator(`[data-testid="run-view"][data-run-id="${started.id}"]`).waitFor();
  await page.locator('[data-testid="run-state"][data-state="Failed"]').waitFor();
  const resume = page.getByTestId('run-resume');
  assert.equal(await resume.innerText(), 'Resume from last checkpoint');
  await page.screenshot({ path: join(ARTIFACTS, 'resume-interrupted.png') });
  await checkA11y(assert, page, ARTIFACTS, 'resume-interrupted');

  await resume.click();
  await page.waitForFunction((old) => {
    const id = document.querySelector('[data-testid="run-view"]')?.getAttribute('data-run-id');
    return id && id !== old;
  }, started.id);
  const next = await page.getByTestId('run-view').getAttribute('data-run-id');
  assert.notEqual(next, started.id);
  // The resumed run carries on: the demo's first write waits for approval.
  await page.locator('[data-testid="approval-dialog"][data-kind="patch"]').waitFor();
  const resumed = await (await call(`/api/runs/${next}`)).json();
  assert.equal(resumed.sessionId, interrupted.sessionId, 'same session');
  await page.screenshot({ path: join(ARTIFACTS, 'resume-resumed.png') });
  // The interrupted run stays Failed and offers nothing more to resume twice.
  assert.equal((await (await call(`/api/runs/${started.id}`)).json()).state, 'Failed');
});
