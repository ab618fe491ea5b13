// Browser end-to-end test of `agenthub serve`: the real Go binary on a random
// loopback port with a temporary home, driven through the system Chromium by
// playwright-core. Env: AGENTHUB_BIN (default ../build/bin/agenthub),
// E2E_ARTIFACTS (default frontend/test-results), CHROMIUM (default
// /usr/bin/chromium).
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
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

const shot = (name) => page.screenshot({ path: join(ARTIFACTS, `serve-${name}.png`), fullPage: true });

/** Reload with localStorage cleared, so what shows comes from the server. */
async function reloadFromServer() {
  await page.evaluate(() => localStorage.clear());
  await page.reload();
  await page.getByTestId('app-name').waitFor();
}

before(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'agenthub-e2e-'));
  await mkdir(ARTIFACTS, { recursive: true });
  server = await startServer(join(scratch, 'home'));
  context = await chromium.launchPersistentContext(join(scratch, 'profile'), {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1100, height: 720 },
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
  page.setDefaultTimeout(15_000);
});

after(async () => {
  await context?.close();
  if (server) await stopServer(server);
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

test('the page loads with the token, shows AgentHub and drops the token from the address bar', async () => {
  const res = await page.goto(server.url);
  assert.equal(res?.status(), 200);
  await page.getByTestId('app-name').waitFor();
  assert.equal(await page.title(), 'AgentHub');
  assert.equal(await page.getByTestId('app-name').textContent(), 'AgentHub');
  await page.getByTestId('workspaces-empty').waitFor();
  assert.match(await page.getByTestId('workspaces-empty').innerText(), /Agents can only touch folders you add here/);
  assert.ok(!page.url().includes('token='), `token still in the URL: ${page.url()}`);
  await shot('first-screen');
});

test('the same origin without the token is refused', async () => {
  const page401 = await fetch(server.origin + '/');
  assert.equal(page401.status, 401);
  const api401 = await fetch(server.origin + '/api/workspaces');
  assert.equal(api401.status, 401);
  assert.equal((await api401.json()).code, 'unauthorized');
  const wrong = await fetch(server.origin + '/api/workspaces', { headers: { Authorization: 'Bearer wrong' } });
  assert.equal(wrong.status, 401);
  const ok = await api('/api/workspaces');
  assert.equal(ok.status, 200);
  const crossOrigin = await api('/api/settings', { headers: { Origin: 'http://evil.example' } });
  assert.equal(crossOrigin.status, 403);
});

test('the language switch turns the UI to 中文 and back, and survives a reload', async () => {
  // The workspaces section's heading (the home page has more than one h2).
  const heading = page.locator('#ws-title');
  await page.getByTestId('language-zh-CN').click();
  await page.waitForFunction(() => document.documentElement.lang === 'zh-CN');
  assert.match(await heading.innerText(), /工作区/);
  assert.match(await page.getByTestId('workspace-add').innerText(), /添加工作区/);
  await page.waitForFunction(
    async () => (await (await fetch('/api/settings', { credentials: 'same-origin' })).json()).language === 'zh-CN',
  );
  await reloadFromServer();
  await page.getByText('还没有工作区').waitFor();
  assert.match(await heading.innerText(), /工作区/);
  await shot('zh-CN');

  await page.getByTestId('language-en').click();
  await page.getByText('No workspaces yet').waitFor();
  assert.equal((await (await api('/api/settings')).json()).language, 'en');
  await reloadFromServer();
  await page.getByText('No workspaces yet').waitFor();
  assert.equal(await page.evaluate(() => document.documentElement.lang), 'en');
});

test('the theme switch sets dark and survives a reload', async () => {
  const theme = () => page.evaluate(() => document.documentElement.dataset.theme);
  await page.getByTestId('theme-dark').click();
  assert.equal(await theme(), 'dark');
  const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  assert.equal(bg, 'rgb(22, 23, 22)');
  await page.waitForFunction(
    async () => (await (await fetch('/api/settings', { credentials: 'same-origin' })).json()).theme === 'dark',
  );
  await reloadFromServer();
  await page.waitForFunction(() => document.documentElement.dataset.theme === 'dark');
  assert.equal((await (await api('/api/settings')).json()).theme, 'dark');
  await shot('dark');

  await page.getByTestId('theme-light').click();
  assert.equal(await theme(), 'light');
  await page.waitForFunction(
    async () => (await (await fetch('/api/settings', { credentials: 'same-origin' })).json()).theme === 'light',
  );
});

test('a workspace added through the API appears in the list', async () => {
  const dir = await mkdtemp(join(scratch, 'ws-api-'));
  const res = await api('/api/workspaces', { method: 'POST', body: JSON.stringify({ path: dir }) });
  assert.equal(res.status, 200, await res.clone().text());
  const ws = await res.json();
  assert.equal(ws.name, basename(dir));
  assert.ok(ws.id, 'workspace has an id');

  await page.reload();
  const row = page.locator(`[data-testid="workspace-row"][data-workspace-id="${ws.id}"]`);
  await row.waitFor();
  assert.equal(await row.getByTestId('workspace-name').innerText(), basename(dir));
  assert.equal(await page.getByTestId('workspaces-empty').count(), 0);
  await shot('workspace');
});

test('the browser add form allowlists a typed path, and remove asks first', async () => {
  const dir = await mkdtemp(join(scratch, 'ws-form-'));
  await page.getByTestId('workspace-add').click();
  await page.getByTestId('workspace-path-input').fill(dir);
  await page.getByTestId('workspace-add-submit').click();
  const row = page.getByTestId('workspace-row').filter({ hasText: basename(dir) });
  await row.waitFor();
  assert.equal(await page.getByTestId('workspace-row').count(), 2);

  await page.getByTestId('workspace-add').click();
  await page.getByTestId('workspace-path-input').fill(join(scratch, 'does-not-exist'));
  await page.getByTestId('workspace-add-submit').click();
  const notice = page.getByTestId('error-notice');
  await notice.waitFor();
  assert.equal(await notice.getAttribute('data-code'), 'invalid_input');
  await page.getByRole('button', { name: 'Cancel' }).click();

  await row.getByTestId('workspace-remove').click();
  await row.getByTestId('workspace-remove-confirm').click();
  await row.waitFor({ state: 'detached' });
  const listed = await (await api('/api/workspaces')).json();
  assert.equal(listed.length, 1);
});
