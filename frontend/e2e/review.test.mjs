// End-to-end review flow against the real `agenthub serve` and its scripted
// demo profile, in the system Chromium: start a run from the new-run form,
// review and approve the patch (seeing its diff), review and approve the
// shell command, see Completed, and find the file on disk. Then the same in
// 中文 and the dark theme. Env as serve.test.mjs: AGENTHUB_BIN, E2E_ARTIFACTS,
// CHROMIUM.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { access, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { ARTIFACTS, CHROMIUM, startServer, stopServer } from './harness.mjs';

/** @type {{ proc: import('node:child_process').ChildProcess, url: string, origin: string, token: string }} */
let server;
/** @type {import('playwright-core').BrowserContext} */
let context;
/** @type {import('playwright-core').Page} */
let page;
let scratch = '';

const api = (path, init = {}) =>
  fetch(server.origin + path, {
    ...init,
    headers: { Authorization: `Bearer ${server.token}`, 'Content-Type': 'application/json', ...(init.headers ?? {}) },
  });

const shot = (name) => page.screenshot({ path: join(ARTIFACTS, `review-${name}.png`) });

/** A fresh git repository with one committed file, allowlisted through the API. */
async function gitWorkspace(name) {
  const dir = await mkdtemp(join(scratch, `${name}-`));
  const git = (...args) => execFileSync('git', ['-c', 'user.name=e2e', '-c', 'user.email=e2e@example.com', ...args], { cwd: dir });
  git('init', '-q');
  await writeFile(join(dir, 'README.md'), '# Sample project\n\nA workspace for the AgentHub review test.\n');
  git('add', 'README.md');
  git('commit', '-q', '-m', 'init');
  const res = await api('/api/workspaces', { method: 'POST', body: JSON.stringify({ path: dir }) });
  assert.equal(res.status, 200, await res.clone().text());
  return { dir, ws: await res.json() };
}

const exists = (p) =>
  access(p).then(
    () => true,
    () => false,
  );

before(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'agenthub-review-'));
  await mkdir(ARTIFACTS, { recursive: true });
  server = await startServer(join(scratch, 'home'));
  context = await chromium.launchPersistentContext(join(scratch, 'profile'), {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 820 },
    args: [
      '--headless',
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
  page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(20_000);
});

after(async () => {
  await context?.close();
  if (server) await stopServer(server);
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

/**
 * The whole flow for one workspace; `t` holds the texts expected in the
 * current language, `tag` names the screenshots.
 */
async function reviewFlow({ dir, ws }, t, tag) {
  await page.getByTestId('nav-new-run').click();
  await page.getByTestId('new-run-form').waitFor();
  await page.getByTestId('new-run-workspace').selectOption(ws.id);
  const profile = page.getByTestId('new-run-profile');
  assert.equal(await profile.inputValue(), 'demo');
  const profileText = await profile.locator('option:checked').innerText();
  assert.match(profileText, t.scripted, `the demo profile is labelled as scripted: ${profileText}`);
  assert.doesNotMatch(profileText, /\b(gpt|claude|gemini|llama)\b/i);
  await page.getByTestId('new-run-task').fill(t.task);
  await shot(`${tag}-new-run`);
  await page.getByTestId('new-run-submit').click();

  // The run view opens; the patch approval shows its diff in the dialog.
  await page.getByTestId('run-view').waitFor();
  const dialog = page.getByTestId('approval-dialog');
  await page.locator('[data-testid="approval-dialog"][data-kind="patch"]').waitFor();
  assert.equal(await dialog.getAttribute('data-tier'), 'write');
  assert.match(await page.getByTestId('approval-band').innerText(), t.writeBand);
  const file = dialog.getByTestId('diff-file');
  assert.equal(await file.getAttribute('data-path'), 'AGENTHUB_TOUR.md');
  const added = file.locator('tr[data-op="add"]');
  assert.ok((await added.count()) >= 10, 'the diff shows the added lines');
  assert.match(await added.first().innerText(), /# Workspace tour/);
  assert.equal(await dialog.getByTestId('diff-hunk-select').count(), 1, 'one hunk, one checkbox');
  assert.equal(await exists(join(dir, 'AGENTHUB_TOUR.md')), false, 'nothing is written before approval');
  await shot(`${tag}-patch-approval`);

  // Esc closes without deciding: the run still waits; the timeline reopens it.
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'detached' });
  await page.locator('[data-testid="run-state"][data-state="NeedsApproval"]').waitFor();
  assert.equal(await exists(join(dir, 'AGENTHUB_TOUR.md')), false);
  await page.getByTestId('approval-review').click();
  await page.locator('[data-testid="approval-dialog"][data-kind="patch"]').waitFor();
  await page.getByTestId('decide-approve_once').click();

  // The shell approval: the exact command, its directory and the policy trace.
  await page.locator('[data-testid="approval-dialog"][data-kind="shell"]').waitFor();
  assert.equal(await page.getByTestId('shell-command').innerText(), '$ git status --short');
  assert.equal(await page.getByTestId('shell-cwd').innerText(), '.');
  assert.match(await page.getByTestId('policy-trace').innerText(), /default:shell/);
  assert.equal(await exists(join(dir, 'AGENTHUB_TOUR.md')), true, 'the approved patch was written');
  await shot(`${tag}-shell-approval`);
  await page.keyboard.press('a'); // approve once from the keyboard

  // Completed, with the file on disk.
  await page.locator('[data-testid="run-state"][data-state="Completed"]').waitFor();
  const end = page.locator('[data-testid="run-end"][data-outcome="Completed"]');
  await end.waitFor();
  assert.match(await page.getByTestId('run-state').innerText(), t.completed);
  assert.match(await end.getByTestId('end-files').innerText(), /AGENTHUB_TOUR\.md/);
  const body = await readFile(join(dir, 'AGENTHUB_TOUR.md'), 'utf8');
  assert.match(body, /^# Workspace tour\n/);
  assert.match(body, /README\.md/);

  // Streamed deltas became one row per message, never one per delta.
  const messages = page.getByTestId('timeline-message');
  assert.equal(await messages.count(), 5);
  assert.match(await messages.first().innerText(), /scripted demo, not an AI model/);
  assert.equal(await page.getByTestId('timeline-tool').count(), 4);
  const runRow = page.locator(`[data-testid="run-row"]`).filter({ hasText: t.task });
  assert.equal(await runRow.getByTestId('run-status').getAttribute('data-state'), 'Completed');
  assert.equal(await runRow.getByTestId('run-pending').count(), 0);
  await shot(`${tag}-completed`);
}

test('a demo run: approve the patch with its diff, approve the command, Completed, file on disk', async () => {
  const ws = await gitWorkspace('tour');
  await page.goto(server.url);
  await page.getByTestId('app-name').waitFor();
  await page.getByTestId('language-en').click();
  await page.getByTestId('theme-light').click();
  await reviewFlow(
    ws,
    {
      task: 'Give me a tour of this workspace',
      scripted: /scripted/i,
      writeBand: /Write action/,
      completed: /Completed/,
    },
    'en-light',
  );
});

test('the same flow in 中文 and the dark theme', async () => {
  const ws = await gitWorkspace('tour-zh');
  await page.reload();
  await page.getByTestId('app-name').waitFor();
  await page.getByTestId('language-zh-CN').click();
  await page.getByTestId('theme-dark').click();
  await page.waitForFunction(() => document.documentElement.lang === 'zh-CN' && document.documentElement.dataset.theme === 'dark');
  await reviewFlow(
    ws,
    {
      task: '带我浏览这个工作区',
      scripted: /预设脚本/,
      writeBand: /写入操作/,
      completed: /已完成/,
    },
    'zh-dark',
  );
  assert.match(await page.getByTestId('nav-new-run').innerText(), /新建运行/);
  // Put the display back for any later test on this server.
  await page.getByTestId('language-en').click();
  await page.getByTestId('theme-light').click();
});
