// Layout proof for issue 21, against the real `agenthub serve` in the system
// Chromium: every main view (home, run view, approval dialog open, audit,
// settings, search) at 800×600 and 1280×800, in English/light and
// 中文/dark, is screenshotted into E2E_ARTIFACTS (CI keeps them), checked
// with axe-core (no serious or critical violation) and, at 800×600, checked
// that no element runs past the window or clips its own text horizontally.
// Then: a long run title leaves "Cancel run" in view, the sidebar folds away
// and stays folded after a reload, ? lists every action key, a workspace
// deleted from disk is shown missing and cannot start a run, and a server
// that goes away is shown with the reconnect banner.
// Env as serve.test.mjs: AGENTHUB_BIN, E2E_ARTIFACTS, CHROMIUM.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { axeViolations, checkA11y, describeViolations } from './a11y.mjs';
import { ARTIFACTS, CHROMIUM, startServer, stopServer } from './harness.mjs';

/** @type {{ proc: import('node:child_process').ChildProcess, url: string, origin: string, token: string }} */
let server;
/** @type {import('playwright-core').BrowserContext} */
let context;
/** @type {import('playwright-core').Page} */
let page;
let scratch = '';
let workspace;
let runId = '';
let endedId = '';

const LONG_TITLE =
  'Refactor the payment reconciliation service so that every ledger entry written by the nightly batch job is checked against the bank statement export before the books close, and report the differences';

const api = (path, init = {}) =>
  fetch(server.origin + path, {
    ...init,
    headers: { Authorization: `Bearer ${server.token}`, 'Content-Type': 'application/json', ...(init.headers ?? {}) },
  });

async function gitWorkspace(name) {
  const dir = await mkdtemp(join(scratch, `${name}-`));
  const git = (...args) => execFileSync('git', ['-c', 'user.name=e2e', '-c', 'user.email=e2e@example.com', ...args], { cwd: dir });
  git('init', '-q');
  await writeFile(join(dir, 'README.md'), '# Sample project\n');
  git('add', 'README.md');
  git('commit', '-q', '-m', 'init');
  const res = await api('/api/workspaces', { method: 'POST', body: JSON.stringify({ path: dir }) });
  assert.equal(res.status, 200, await res.clone().text());
  return { dir, ws: await res.json() };
}

/** Waits until runId asks for its first approval (generously: the machine is shared). */
async function waitApproval(id) {
  for (let i = 0; ; i++) {
    const list = await (await api('/api/approvals')).json();
    if (list.some((a) => a.runId === id)) return;
    assert.ok(i < 600, `run ${id} asked for no approval within 60 s`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Waits (generously: the machine is shared) for a condition in the page. */
const until = (fn, arg) => page.waitForFunction(fn, arg, { timeout: 60_000 });

before(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'agenthub-layout-'));
  await mkdir(ARTIFACTS, { recursive: true });
  server = await startServer(join(scratch, 'home'));
  workspace = await gitWorkspace('project');
  // A run that waits for its first approval, with a title far too long for any window.
  const res = await api('/api/runs', { method: 'POST', body: JSON.stringify({ workspaceId: workspace.ws.id, task: LONG_TITLE }) });
  assert.equal(res.status, 200, await res.clone().text());
  runId = (await res.json()).id;
  await waitApproval(runId);
  // A run that ended (cancelled while it waited), in a workspace of its own so it is not queued behind the first.
  const other = await gitWorkspace('other');
  const started = await api('/api/runs', { method: 'POST', body: JSON.stringify({ workspaceId: other.ws.id, task: LONG_TITLE + ' (cancelled)' }) });
  assert.equal(started.status, 200, await started.clone().text());
  endedId = (await started.json()).id;
  await waitApproval(endedId);
  const cancelled = await api(`/api/runs/${endedId}/cancel`, { method: 'POST' });
  assert.equal(cancelled.status, 200, await cancelled.clone().text());
  context = await chromium.launchPersistentContext(join(scratch, 'profile'), {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 800 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(30_000);
});

after(async () => {
  await context?.close();
  if (server) await stopServer(server);
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

/**
 * What runs past the window's right edge or clips its own text: elements
 * inside a horizontal scroller (a diff, a code block) scroll by design and are
 * skipped, as are visually hidden ones; text cut with an ellipsis (and the
 * full text on hover) is allowed.
 */
function overflowing() {
  const out = [];
  const vw = document.documentElement.clientWidth;
  const scrolls = (el) => {
    for (let p = el.parentElement; p; p = p.parentElement) {
      const o = getComputedStyle(p).overflowX;
      if (o === 'auto' || o === 'scroll') return true;
    }
    return false;
  };
  const name = (el) =>
    `${el.tagName.toLowerCase()}${el.dataset.testid ? `[data-testid=${el.dataset.testid}]` : ''}${el.className && typeof el.className === 'string' ? '.' + el.className.trim().split(/\s+/).join('.') : ''}`;
  for (const el of document.body.querySelectorAll('*')) {
    const r = el.getBoundingClientRect();
    if (r.width <= 1 || r.height <= 1) continue;
    const cs = getComputedStyle(el);
    if (cs.visibility === 'hidden' || cs.position === 'fixed' && cs.clip !== 'auto') continue;
    if (scrolls(el)) continue;
    if (r.right > vw + 1) {
      out.push(`${name(el)} ends at ${Math.round(r.right)} px, past the ${vw} px window`);
      continue;
    }
    const clips = cs.overflowX === 'hidden' || cs.overflowX === 'clip';
    const ownText = [...el.childNodes].some((n) => n.nodeType === 3 && n.textContent.trim() !== '');
    if (clips && ownText && el.scrollWidth > el.clientWidth + 1 && cs.textOverflow !== 'ellipsis') {
      out.push(`${name(el)} clips its text: ${el.scrollWidth} px in ${el.clientWidth} px`);
    }
  }
  return out;
}

/** Sets the language and theme through the API, then reloads the page at hash. */
async function setLook(language, theme) {
  const res = await api('/api/settings', { method: 'PUT', body: JSON.stringify({ language, theme }) });
  assert.equal(res.status, 200, await res.clone().text());
}

async function open(hash) {
  await page.goto(`${server.url}${hash}`);
  await page.getByTestId('main').waitFor();
}

const LOOKS = [
  { tag: 'en-light', language: 'en', theme: 'light', lang: 'en' },
  { tag: 'zh-dark', language: 'zh-CN', theme: 'dark', lang: 'zh-CN' },
];
const SIZES = [
  { tag: '800x600', width: 800, height: 600 },
  { tag: '1280x800', width: 1280, height: 800 },
];

/** Every main view, reached the way a user would, ready for its picture. */
const VIEWS = [
  {
    name: 'home',
    go: async () => {
      await open('#/');
      await page.getByTestId('workspace-name').first().waitFor();
    },
  },
  {
    name: 'run',
    go: async () => {
      await open(`#/run/${runId}`);
      await page.getByTestId('approval-dialog').waitFor();
      await page.keyboard.press('Escape'); // the run itself, the dialog dismissed
      await page.getByTestId('approval-dialog').waitFor({ state: 'detached' });
      await page.getByTestId('run-status-line').waitFor();
    },
  },
  {
    name: 'run-ended',
    go: async () => {
      await open(`#/run/${endedId}`);
      await page.locator('[data-testid="run-end"]').waitFor({ timeout: 60_000 });
    },
  },
  {
    name: 'approval',
    go: async () => {
      await open(`#/run/${runId}`); // a watched run's waiting approval opens by itself
      await page.getByTestId('approval-dialog').waitFor();
    },
  },
  {
    name: 'audit',
    go: async () => {
      await open('#/audit');
      await page.getByTestId('audit-view').waitFor();
      await page.locator('[data-testid="audit-verify"][data-state="ok"]').waitFor({ timeout: 60_000 });
    },
  },
  {
    name: 'settings',
    go: async () => {
      await open('#/settings');
      await page.getByTestId('settings').waitFor();
    },
  },
  {
    name: 'search',
    go: async () => {
      await open('#/');
      await page.getByTestId('search-open').click();
      await page.getByTestId('search-input').fill('ledger');
      await page.getByTestId('search-hit').first().waitFor({ timeout: 60_000 });
    },
  },
];

test('every main view at 800×600 and 1280×800, in English/light and 中文/dark: screenshot, axe, no horizontal overflow', async () => {
  // Every view is taken and checked before the verdict, so one run names every problem.
  const problems = [];
  for (const look of LOOKS) {
    await setLook(look.language, look.theme);
    for (const size of SIZES) {
      await page.setViewportSize({ width: size.width, height: size.height });
      for (const view of VIEWS) {
        await view.go();
        await until(({ lang, theme }) => document.documentElement.lang === lang && document.documentElement.dataset.theme === theme, {
          lang: look.lang,
          theme: look.theme,
        });
        const name = `layout-${view.name}-${size.tag}-${look.tag}`;
        await page.screenshot({ path: join(ARTIFACTS, `${name}.png`) });
        const found = await axeViolations(page);
        await writeFile(join(ARTIFACTS, `a11y-${name}.json`), JSON.stringify(found, null, 2));
        if (found.length > 0) problems.push(`${name}: axe found serious or critical violations:\n${describeViolations(found)}`);
        if (size.width === 800) {
          const bad = await page.evaluate(overflowing);
          if (bad.length > 0) problems.push(`${name}: elements overflow horizontally:\n  ${bad.join('\n  ')}`);
        }
      }
    }
  }
  await setLook('en', 'light');
  assert.deepEqual(problems, []);
});

test('a long title leaves "Cancel run" in view at both sizes, truncated in the middle with the full title on hover', async () => {
  for (const size of SIZES) {
    await page.setViewportSize({ width: size.width, height: size.height });
    await open(`#/run/${runId}`);
    await page.getByTestId('approval-dialog').waitFor();
    await page.keyboard.press('Escape');
    const cancel = page.getByTestId('run-cancel');
    await cancel.waitFor();
    const box = await cancel.boundingBox();
    assert.ok(box && box.x >= 0 && box.x + box.width <= size.width, `Cancel run is off-screen at ${size.tag}: ${JSON.stringify(box)}`);
    const title = page.getByTestId('run-title');
    assert.equal(await title.locator('[title]').getAttribute('title'), LONG_TITLE);
    assert.equal((await title.textContent()).trim(), LONG_TITLE, 'the whole title is in the page');
    const end = title.locator('.end');
    assert.equal(await end.textContent(), ' differences');
    const endBox = await end.boundingBox();
    assert.ok(endBox && endBox.x + endBox.width <= box.x, 'the end of the title stays visible, left of Cancel run');
  }
});

test('the sidebar folds away with its button and with [, and stays folded after a reload', async () => {
  await page.setViewportSize({ width: 800, height: 600 });
  await open('#/');
  const sidebar = page.getByTestId('sidebar');
  await sidebar.waitFor();
  await page.getByTestId('sidebar-toggle').click();
  await sidebar.waitFor({ state: 'hidden' });
  assert.equal(await page.getByTestId('sidebar-toggle').getAttribute('aria-expanded'), 'false');
  await page.reload();
  await page.getByTestId('main').waitFor();
  assert.equal(await sidebar.isVisible(), false, 'the folded sidebar is remembered');
  await page.screenshot({ path: join(ARTIFACTS, 'layout-sidebar-folded-800x600.png') });
  await page.locator('body').press('[');
  await sidebar.waitFor();
  assert.equal(await page.getByTestId('sidebar-toggle').getAttribute('aria-expanded'), 'true');
});

test('? lists every action key, global and per view; Escape closes it', async () => {
  await page.setViewportSize({ width: 1280, height: 800 });
  await open('#/');
  await page.locator('body').press('?');
  const help = page.getByTestId('help-overlay');
  await help.waitFor();
  for (const scope of ['global', 'run', 'inbox', 'dialog']) assert.equal(await help.locator(`[data-scope="${scope}"]`).count(), 1, scope);
  assert.ok((await help.getByTestId('help-key').count()) >= 15);
  await page.screenshot({ path: join(ARTIFACTS, 'layout-help-1280x800.png') });
  await checkA11y(assert, page, ARTIFACTS, 'layout-help');
  await page.keyboard.press('Escape');
  await help.waitFor({ state: 'detached' });
  // And a listed key does what it says: I opens the inbox.
  await page.locator('body').press('i');
  await page.getByTestId('inbox').waitFor();
});

test('a workspace deleted from disk is shown missing and cannot start a run', async () => {
  const gone = await gitWorkspace('gone');
  await open('#/');
  await page.getByTestId('workspace-name').filter({ hasText: gone.ws.name }).waitFor();
  await rm(gone.dir, { recursive: true, force: true });
  // The engine notices within a second or so and tells the page (system.changed).
  await page.getByTestId('workspace-missing').waitFor({ timeout: 60_000 });
  await open(`#/new/${gone.ws.id}`);
  await page.getByTestId('new-run-workspace-missing').waitFor();
  await page.getByTestId('new-run-task').fill('look around');
  assert.equal(await page.getByTestId('new-run-submit').isDisabled(), true);
  const res = await api('/api/runs', { method: 'POST', body: JSON.stringify({ workspaceId: gone.ws.id, task: 'look around' }) });
  assert.equal(res.status, 409);
  assert.equal((await res.json()).code, 'workspace_missing');
  await page.screenshot({ path: join(ARTIFACTS, 'layout-missing-workspace.png') });
});

test('a server that goes away is shown with the reconnect banner, not as a live page', async () => {
  await open('#/');
  await page.getByTestId('workspace-name').first().waitFor();
  await stopServer(server);
  const banner = page.getByTestId('connection-lost');
  await banner.waitFor({ timeout: 60_000 });
  assert.equal(await page.getByTestId('connection-retry').isVisible(), true);
  await page.screenshot({ path: join(ARTIFACTS, 'layout-connection-lost.png') });
});
