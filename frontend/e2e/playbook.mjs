// Shared setup of the browser tests that review a playbook's patch: a data
// directory with the playbook as a profile, the real `agenthub serve` over it,
// Chromium, a committed git workspace on the allowlist, a run started from
// the New run form, and the wait for its completion.
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { ARTIFACTS, CHROMIUM, startServer, stopServer } from './harness.mjs';

/** Starts serve with the playbook as profile `name` and Chromium at the viewport. */
export async function startPlaybook(name, playbook, viewport) {
  const scratch = await mkdtemp(join(tmpdir(), `agenthub-${name}-`));
  await mkdir(ARTIFACTS, { recursive: true });
  const home = join(scratch, 'home');
  await mkdir(join(home, 'profiles'), { recursive: true });
  await writeFile(join(home, 'profiles', `${name}.playbook.toml.txt`), playbook);
  await writeFile(join(home, 'profiles', `${name}.toml`), `name = "${name}"\nruntime = "script"\nplaybook = "${name}.playbook.toml.txt"\n`);
  const server = await startServer(home);
  const context = await chromium.launchPersistentContext(join(scratch, 'profile'), {
    executablePath: CHROMIUM,
    headless: true,
    viewport,
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });
  return { scratch, server, context };
}

export async function stopPlaybook(env) {
  await env?.context?.close();
  if (env?.server) await stopServer(env.server);
  if (env?.scratch) await rm(env.scratch, { recursive: true, force: true });
}

/** A git repository holding one committed file, added to the allowlist. */
export async function gitWorkspace(env, file, content) {
  const dir = await mkdtemp(join(env.scratch, 'ws-'));
  const git = (...args) => execFileSync('git', ['-c', 'user.name=e2e', '-c', 'user.email=e2e@example.com', ...args], { cwd: dir });
  git('init', '-q');
  await writeFile(join(dir, file), content);
  git('add', file);
  git('commit', '-q', '-m', 'init');
  const res = await fetch(env.server.origin + '/api/workspaces', {
    method: 'POST',
    headers: { Authorization: `Bearer ${env.server.token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ path: dir }),
  });
  if (res.status !== 200) throw new Error(`add workspace: ${res.status} ${await res.text()}`);
  return { dir, ws: await res.json() };
}

/** Opens the app and starts a run of the profile from the New run form. */
export async function startRun(env, ws, profile, task) {
  const page = env.context.pages()[0] ?? (await env.context.newPage());
  page.setDefaultTimeout(30_000);
  await page.goto(env.server.url);
  await page.getByTestId('nav-new-run').click();
  await page.getByTestId('new-run-workspace').selectOption(ws.id);
  await page.getByTestId('new-run-profile').selectOption(profile);
  await page.getByTestId('new-run-task').fill(task);
  await page.getByTestId('new-run-submit').click();
  return page;
}

/** Waits for the run to complete; the error quotes the run when it does not. */
export async function waitCompleted(env, page) {
  await page
    .locator('[data-testid="run-state"][data-state="Completed"]')
    .waitFor()
    .catch(async (err) => {
      const runId = await page.getByTestId('run-view').getAttribute('data-run-id');
      const run = await fetch(`${env.server.origin}/api/runs/${runId}`, { headers: { Authorization: `Bearer ${env.server.token}` } });
      throw new Error(`the run did not complete: ${await run.text()}`, { cause: err });
    });
}
