// End-to-end review flow against the real `agenthub serve` and its scripted
// demo profile, in the system Chromium: start a run from the new-run form,
// review and approve the patch (seeing its diff), review and approve the
// shell command, see Completed, and find the file on disk; then open the
// run's audit entries (approval requested and decided, patch applied) and the
// settings page. Then the same in 中文 and the dark theme. Each main view is
// checked with axe-core on the way (no serious or critical violations).
// Env as serve.test.mjs: AGENTHUB_BIN, E2E_ARTIFACTS, CHROMIUM.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { access, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { checkA11y } from './a11y.mjs';
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
const a11y = (name) => checkA11y(assert, page, ARTIFACTS, `review-${name}`);

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
  await a11y(`${tag}-new-run`);
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
  await a11y(`${tag}-patch-approval`);

  // Esc closes without deciding: the run still waits; the timeline reopens it.
  await page.keyboard.press('Escape');
  await dialog.waitFor({ state: 'detached' });
  await page.locator('[data-testid="run-state"][data-state="NeedsApproval"]').waitFor();
  assert.equal(await exists(join(dir, 'AGENTHUB_TOUR.md')), false);
  await a11y(`${tag}-run-waiting`);

  // The inbox lists it; back to the run from there.
  await page.getByTestId('nav-inbox').click();
  await page.getByTestId('inbox-item').filter({ hasText: t.task }).waitFor();
  await a11y(`${tag}-inbox`);
  await page.locator('[data-testid="run-row"]').filter({ hasText: t.task }).click();
  await page.getByTestId('run-view').waitFor();
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
  await a11y(`${tag}-completed`);
  const runId = await page.getByTestId('run-view').getAttribute('data-run-id');
  assert.ok(runId);

  // Step 5: the run's audit entries: both approvals requested and decided,
  // and the patch applied with its file, on a chain that verifies.
  await page.getByTestId('run-audit-link').click();
  const audit = page.getByTestId('audit-view');
  await audit.waitFor();
  assert.equal(new URL(page.url()).hash, `#/audit/run/${runId}`);
  await page.locator('[data-testid="audit-verify"][data-state="ok"]').waitFor();
  assert.match(await page.getByTestId('audit-verify').innerText(), t.verified);
  assert.equal(await page.getByTestId('audit-filter-run').inputValue(), runId);
  const entries = audit.getByTestId('audit-entry');
  await entries.first().waitFor();
  const rows = await entries.evaluateAll((els) =>
    els.map((e) => ({ kind: e.dataset.kind, run: e.dataset.runId, call: e.dataset.toolCallId, text: e.textContent ?? '' })),
  );
  assert.ok(rows.every((r) => r.run === runId), 'only this run’s entries are listed');
  const of = (kind) => rows.filter((r) => r.kind === kind);
  assert.equal(of('approval.requested').length, 2, 'the patch and the command asked');
  assert.equal(of('approval.resolved').length, 2, 'both were decided');
  assert.equal(of('patch.applied').length, 1, 'one patch applied');
  const applied = of('patch.applied')[0];
  assert.match(applied.text, /AGENTHUB_TOUR\.md/);
  assert.match(applied.text, t.patchApplied);
  assert.ok(of('approval.requested').some((r) => r.call === applied.call), 'the applied patch is the one that was approved');
  assert.match(of('approval.resolved').map((r) => r.text).join('\n'), t.approvedOnce);
  // Newest first: the patch was applied after it was decided, which was after it was asked.
  const at = (kind, call) => rows.findIndex((r) => r.kind === kind && r.call === call);
  assert.ok(at('patch.applied', applied.call) < at('approval.resolved', applied.call));
  assert.ok(at('approval.resolved', applied.call) < at('approval.requested', applied.call));
  await audit.locator('[data-testid="audit-entry"][data-kind="patch.applied"]').scrollIntoViewIfNeeded();
  await shot(`${tag}-audit`);
  await a11y(`${tag}-audit`);

  // Back to the run through its entry.
  await entries.first().getByTestId('audit-open-run').click();
  await page.locator(`[data-testid="run-view"][data-run-id="${runId}"]`).waitFor();
  return runId;
}

/** The settings page: the demo profile is scripted, the workspace has the default gate. */
async function settingsPage(ws, t, tag) {
  await page.getByTestId('nav-settings').click();
  await page.getByTestId('settings').waitFor();
  const demo = page.locator('[data-testid="profile"][data-profile="demo"]');
  await demo.waitFor();
  assert.match(await demo.getByTestId('profile-scripted').innerText(), t.scripted);
  await page.getByTestId('policy-workspace').selectOption(ws.id);
  await page.locator('[data-testid="policy-source"][data-source="default"]').waitFor();
  const secret = page.locator('[data-testid="policy-default"][data-action="secret"]');
  assert.equal(await secret.getAttribute('data-verdict'), 'deny');
  await shot(`${tag}-settings`);
  await a11y(`${tag}-settings`);
  await page.getByTestId('policy-defaults').scrollIntoViewIfNeeded();
  await shot(`${tag}-settings-policy`);
  await page.getByTestId('profiles').scrollIntoViewIfNeeded();
  await shot(`${tag}-settings-profiles`);
}

/**
 * Theme and language switch in place: the run's timeline keeps its nodes and
 * its scroll position.
 */
async function switchKeepsPlace(runId, from, to) {
  await page.goto(`${server.url.replace(/\?token=.*/, '')}#/run/${runId}`);
  const scroller = page.getByTestId('run-scroll');
  await page.getByTestId('timeline-message').first().waitFor();
  const before = await scroller.evaluate((el) => {
    el.scrollTop = Math.min(120, el.scrollHeight - el.clientHeight);
    document.querySelector('[data-testid="timeline-message"]')?.setAttribute('data-kept', 'yes');
    return el.scrollTop;
  });
  await page.getByTestId(`language-${to.language}`).click();
  await page.getByTestId(`theme-${to.theme}`).click();
  await page.waitForFunction((l) => document.documentElement.lang === l, to.language);
  assert.equal(await scroller.evaluate((el) => el.scrollTop), before, 'the scroll position is kept');
  assert.equal(await page.locator('[data-testid="timeline-message"][data-kept="yes"]').count(), 1, 'the timeline was not rebuilt');
  await page.getByTestId(`language-${from.language}`).click();
  await page.getByTestId(`theme-${from.theme}`).click();
  await page.waitForFunction((l) => document.documentElement.lang === l, from.language);
  assert.equal(await scroller.evaluate((el) => el.scrollTop), before);
}

test('a demo run: approve the patch with its diff, approve the command, Completed, file on disk', async () => {
  const ws = await gitWorkspace('tour');
  await page.goto(server.url);
  await page.getByTestId('app-name').waitFor();
  await page.getByTestId('language-en').click();
  await page.getByTestId('theme-light').click();
  const t = {
    task: 'Give me a tour of this workspace',
    scripted: /scripted/i,
    writeBand: /Write action/,
    completed: /Completed/,
    verified: /Chain verified/,
    patchApplied: /Patch applied/,
    approvedOnce: /Approved once/,
  };
  const runId = await reviewFlow(ws, t, 'en-light');
  await settingsPage(ws.ws, t, 'en-light');
  await switchKeepsPlace(runId, { language: 'en', theme: 'light' }, { language: 'zh-CN', theme: 'dark' });
});

test('the same flow in 中文 and the dark theme', async () => {
  const ws = await gitWorkspace('tour-zh');
  await page.reload();
  await page.getByTestId('app-name').waitFor();
  await page.getByTestId('language-zh-CN').click();
  await page.getByTestId('theme-dark').click();
  await page.waitForFunction(() => document.documentElement.lang === 'zh-CN' && document.documentElement.dataset.theme === 'dark');
  const t = {
    task: '带我浏览这个工作区',
    scripted: /预设脚本/,
    writeBand: /写入操作/,
    completed: /已完成/,
    verified: /哈希链校验通过/,
    patchApplied: /已应用补丁/,
    approvedOnce: /已批准一次/,
  };
  await reviewFlow(ws, t, 'zh-dark');
  await settingsPage(ws.ws, t, 'zh-dark');
  assert.match(await page.getByTestId('nav-new-run').innerText(), /新建运行/);
  // Put the display back for any later test on this server.
  await page.getByTestId('language-en').click();
  await page.getByTestId('theme-light').click();
});
