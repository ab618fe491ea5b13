// Per-hunk review in the browser, end to end: a playbook profile edits a
// committed file in two places; in the approval dialog the reviewer keeps
// the first change, unticks the second and says why; only the first lands
// on disk, and the playbook's next step checks that the agent was told
// which hunk was rejected (else the run fails). Against the real
// `agenthub serve` in the system Chromium. Env as serve.test.mjs.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { ARTIFACTS, CHROMIUM, startServer, stopServer } from './harness.mjs';

const lines = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`);
const original = lines.join('\n') + '\n';
const both = lines.map((l, i) => (i === 1 || i === 18 ? `${l} (changed)` : l)).join('\n') + '\n';
const firstOnly = lines.map((l, i) => (i === 1 ? `${l} (changed)` : l)).join('\n') + '\n';

const playbook = `version = 1
name = "two-hunks"

[[step]]
say = "I'll change two lines of notes.txt."
[[step.call]]
tool = "write_file"
args = { path = "notes.txt", content = """
${both}""" }

[[step]]
expect = ["approved 1 of 2 hunks", "keep line 19"]
say = "Understood: only the first change was made."
`;

let scratch = '';
/** @type {{ proc: import('node:child_process').ChildProcess, url: string, origin: string, token: string }} */
let server;
/** @type {import('playwright-core').BrowserContext} */
let context;

before(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'agenthub-hunks-'));
  await mkdir(ARTIFACTS, { recursive: true });
  const home = join(scratch, 'home');
  await mkdir(join(home, 'profiles'), { recursive: true });
  await writeFile(join(home, 'profiles', 'two-hunks.playbook.toml.txt'), playbook);
  await writeFile(
    join(home, 'profiles', 'two-hunks.toml'),
    'name = "two-hunks"\nruntime = "script"\nplaybook = "two-hunks.playbook.toml.txt"\n',
  );
  server = await startServer(home);
  context = await chromium.launchPersistentContext(join(scratch, 'profile'), {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 820 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });
});

after(async () => {
  await context?.close();
  if (server) await stopServer(server);
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

test('approve one hunk, reject the other: only the approved hunk is written', async () => {
  const dir = await mkdtemp(join(scratch, 'ws-'));
  const git = (...args) => execFileSync('git', ['-c', 'user.name=e2e', '-c', 'user.email=e2e@example.com', ...args], { cwd: dir });
  git('init', '-q');
  await writeFile(join(dir, 'notes.txt'), original);
  git('add', 'notes.txt');
  git('commit', '-q', '-m', 'init');
  const res = await fetch(server.origin + '/api/workspaces', {
    method: 'POST',
    headers: { Authorization: `Bearer ${server.token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify({ path: dir }),
  });
  assert.equal(res.status, 200, await res.clone().text());
  const ws = await res.json();

  const page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(20_000);
  await page.goto(server.url);
  await page.getByTestId('nav-new-run').click();
  await page.getByTestId('new-run-workspace').selectOption(ws.id);
  await page.getByTestId('new-run-profile').selectOption('two-hunks');
  await page.getByTestId('new-run-task').fill('change two lines');
  await page.getByTestId('new-run-submit').click();

  const dialog = page.locator('[data-testid="approval-dialog"][data-kind="patch"]');
  await dialog.waitFor();
  const boxes = dialog.getByTestId('diff-hunk-select');
  assert.equal(await boxes.count(), 2, 'two hunks, two checkboxes');
  await boxes.nth(1).uncheck();
  assert.equal(await boxes.nth(0).isChecked(), true);
  await dialog.getByTestId('approval-reason').fill('keep line 19');
  await page.screenshot({ path: join(ARTIFACTS, 'hunks-one-of-two.png') });
  assert.equal(await readFile(join(dir, 'notes.txt'), 'utf8'), original, 'nothing is written before the decision');
  await dialog.getByTestId('decide-approve_once').click();

  // Completed only if the agent was told which hunk was rejected (the
  // playbook's expect).
  await page
    .locator('[data-testid="run-state"][data-state="Completed"]')
    .waitFor()
    .catch(async (err) => {
      const runId = await page.getByTestId('run-view').getAttribute('data-run-id');
      const run = await fetch(`${server.origin}/api/runs/${runId}`, { headers: { Authorization: `Bearer ${server.token}` } });
      throw new Error(`the run did not complete: ${await run.text()}`, { cause: err });
    });
  assert.equal(await readFile(join(dir, 'notes.txt'), 'utf8'), firstOnly, 'exactly the approved hunk is on disk');
  await page.screenshot({ path: join(ARTIFACTS, 'hunks-completed.png') });
});
