// End-to-end artifacts (issue 18) against the real `agenthub serve`, in the
// system Chromium: a playbook run publishes a Markdown document, a PNG and an
// HTML page from its workspace through the built-in publish_artifact tool,
// and a screenshot of that page (which waits for its privacy review);
// the run view's Artifacts link opens them; the document is rendered, the
// image decoded, and the HTML page shown in a sandboxed frame that can reach
// neither the network nor AgentHub's API: its script never runs, none of its
// resources, links, forms or refresh reach a loopback server the test
// starts, and a fetch made inside the frame (by the test, through the
// DevTools protocol) to that server or to the API fails.
// Env as serve.test.mjs: AGENTHUB_BIN, E2E_ARTIFACTS, CHROMIUM.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { createServer } from 'node:http';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { chromium } from 'playwright-core';
import { checkA11y } from './a11y.mjs';
import { ARTIFACTS, BIN, CHROMIUM, startServer, stopServer } from './harness.mjs';

/** @type {{ proc: import('node:child_process').ChildProcess, url: string, origin: string, token: string }} */
let server;
/** @type {import('playwright-core').BrowserContext} */
let context;
/** @type {import('playwright-core').Page} */
let page;
/** @type {import('node:http').Server} */
let probe;
/** Every request the probe server received (path). */
const probed = [];
let scratch = '';
let home = '';

const api = (path, init = {}) =>
  fetch(server.origin + path, {
    ...init,
    headers: { Authorization: `Bearer ${server.token}`, 'Content-Type': 'application/json', ...(init.headers ?? {}) },
  });

const shot = (name) => page.screenshot({ path: join(ARTIFACTS, `artifacts-${name}.png`) });

/**
 * A fetch made inside a frame or page (through the DevTools protocol, so
 * it runs even where the page's own scripts may not): "reached STATUS" or
 * "blocked: ERROR".
 */
const tryFetch = (target, url) =>
  target.evaluate(async (u) => {
    try {
      const r = await fetch(u, { credentials: 'include' });
      return `reached ${r.status}`;
    } catch (e) {
      return `blocked: ${e}`;
    }
  }, url);

// A 2x1 PNG.
const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAIAAAABCAIAAAB7QOjdAAAAEElEQVR4nGP4z8DAwMDAAAAOAAL/5s2UlwAAAABJRU5ErkJggg==',
  'base64',
);

/** An HTML page that tries every way out it can, at the probe server and the API. */
function hostilePage(p, apiOrigin) {
  return `<!doctype html><html><head><title>probe-page</title>
<link rel="stylesheet" href="${p}/css"><link rel="dns-prefetch" href="${p}/dns"><link rel="prefetch" href="${p}/prefetch">
<meta http-equiv="refresh" content="0;url=${p}/refresh">
<base href="${p}/base/">
<style>@import url("${p}/import"); h1 { color: rgb(200, 0, 0) } body { background: url("${p}/bg") }</style>
</head><body onload="fetch('${p}/onload')">
<h1 id="h">Preview page</h1>
<img src="${p}/img" srcset="${p}/srcset 2x"><img src="relative.png">
<script>document.title = 'script-ran'; fetch('${p}/fetch'); fetch('${apiOrigin}/api/workspaces').then(() => (document.title = 'api-reached'));</script>
<iframe src="${p}/iframe"></iframe><object data="${p}/object"></object><embed src="${p}/embed">
<video poster="${p}/poster" src="${p}/video"></video>
<a id="out" href="${p}/link" target="_top" ping="${p}/ping">out</a>
<form action="${p}/form"><button id="go" formaction="${p}/formaction">go</button></form>
<div style="background-image: url('${p}/style')">styled</div>
<svg><image href="${p}/svg" width="1" height="1"/></svg>
</body></html>`;
}

before(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'agenthub-artifacts-'));
  home = join(scratch, 'home');
  await mkdir(ARTIFACTS, { recursive: true });
  probe = createServer((req, res) => {
    probed.push(req.url ?? '');
    res.writeHead(200, { 'Content-Type': 'text/plain', 'Access-Control-Allow-Origin': '*' });
    res.end('reached');
  });
  await new Promise((r) => probe.listen(0, '127.0.0.1', r));
  server = await startServer(home);
  context = await chromium.launchPersistentContext(join(scratch, 'profile'), {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 900 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking',
      '--disable-component-update', '--disable-sync'],
  });
  page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(30_000);
});

after(async () => {
  await context?.close();
  if (server) await stopServer(server);
  await new Promise((r) => (probe ? probe.close(r) : r()));
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

test('a run publishes a document, an image and an HTML page; the preview frame reaches nothing', async () => {
  const probeOrigin = `http://127.0.0.1:${probe.address().port}`;
  // The probe server answers (so a request that got through would be seen).
  assert.equal(await (await fetch(`${probeOrigin}/control`)).text(), 'reached');
  probed.length = 0;

  const dir = await mkdtemp(join(scratch, 'ws-'));
  const git = (...args) => execFileSync('git', ['-c', 'user.name=e2e', '-c', 'user.email=e2e@example.com', ...args], { cwd: dir });
  git('init', '-q');
  await writeFile(join(dir, 'report.md'), '# Release report\n\n- **bold** item\n\n<script>document.title = "md-script"</script>\n');
  await writeFile(join(dir, 'chart.png'), PNG);
  await writeFile(join(dir, 'page.html'), hostilePage(probeOrigin, server.origin));
  git('add', '.');
  git('commit', '-q', '-m', 'init');
  const res = await api('/api/workspaces', { method: 'POST', body: JSON.stringify({ path: dir }) });
  assert.equal(res.status, 200, await res.clone().text());

  const playbook = join(scratch, 'publish.toml');
  await writeFile(
    playbook,
    `version = 1
name = "publish"
[[step]]
say = "Publishing three artifacts."
[[step.call]]
tool = "publish_artifact"
args = { path = "report.md", title = "Release report", language = "en" }
[[step.call]]
tool = "publish_artifact"
args = { path = "chart.png", title = "Chart" }
[[step.call]]
tool = "publish_artifact"
args = { path = "page.html", title = "Probe page" }
[[step.call]]
tool = "screenshot"
args = { path = "page.html", viewport = "800x600", title = "Probe page, rendered" }
[[step]]
expect = ["as artifact art_"]
say = "Done."
`,
  );
  const { stdout, stderr } = await promisify(execFile)(
    BIN,
    ['run', '--home', home, '--workspace', dir, '--playbook', playbook, 'publish three artifacts'],
    { env: { ...process.env, AGENTHUB_HOME: '', AGENTHUB_LOCAL_SERVERS: 'none' }, timeout: 120_000 },
  );
  const runId = /\brun_[0-9a-f]{32}\b/.exec(stdout + stderr)?.[0];
  assert.ok(runId, `the run id is printed:\n${stdout}\n${stderr}`);
  const list = await (await api(`/api/artifacts?runId=${runId}`)).json();
  assert.deepEqual(list.map((a) => a.kind).sort(), ['document', 'html', 'image', 'screenshot'], JSON.stringify(list));

  // The run view links its artifacts.
  await page.goto(server.url);
  await page.goto(`${server.origin}/#/run/${runId}`);
  await page.getByTestId('run-artifacts-link').click();
  await page.getByTestId('artifacts-view').waitFor();
  // The list loads after the view: wait for its fourth item, then count.
  await page.getByTestId('artifact-item').nth(3).waitFor();
  assert.equal(await page.getByTestId('artifact-item').count(), 4);
  // The image has a thumbnail in the list.
  await page.getByTestId('artifact-thumb').first().waitFor();

  // The document, rendered (its script is not).
  await page.locator('[data-testid="artifact-item"][data-kind="document"]').click();
  const docView = page.getByTestId('artifact-document');
  await docView.locator('h1').waitFor();
  assert.equal(await docView.locator('h1').innerText(), 'Release report');
  assert.equal(await docView.locator('strong').innerText(), 'bold');
  assert.equal(await docView.locator('script').count(), 0, 'the Markdown script is sanitised away');
  await shot('document');
  await checkA11y(assert, page, ARTIFACTS, 'artifacts-document');

  // The image, decoded.
  await page.locator('[data-testid="artifact-item"][data-kind="image"]').click();
  const img = page.getByTestId('artifact-image');
  await img.waitFor();
  await page.waitForFunction(() => {
    const i = document.querySelector('[data-testid="artifact-image"]');
    return i instanceof HTMLImageElement && i.complete && i.naturalWidth > 0;
  });
  assert.deepEqual(await img.evaluate((i) => [i.naturalWidth, i.naturalHeight]), [2, 1]);
  await shot('image');

  // The screenshot (taken offline from the same page) waits for its
  // privacy review: shown, but no download until the user has checked it.
  await page.locator('[data-testid="artifact-item"][data-kind="screenshot"]').click();
  await page.getByTestId('artifact-privacy-pending').waitFor();
  await page.waitForFunction(() => {
    const i = document.querySelector('[data-testid="artifact-image"]');
    return i instanceof HTMLImageElement && i.complete && i.naturalWidth === 800;
  });
  assert.equal(await page.getByTestId('artifact-download').count(), 0, 'no download before the review');
  await shot('screenshot-pending');
  await page.getByTestId('artifact-review').click();
  await page.getByTestId('artifact-privacy-pending').waitFor({ state: 'detached' });
  await page.getByTestId('artifact-download').waitFor();

  // The HTML page, in a sandboxed frame.
  await page.locator('[data-testid="artifact-item"][data-kind="html"]').click();
  const frameEl = page.getByTestId('artifact-frame');
  await frameEl.waitFor();
  assert.equal(await frameEl.getAttribute('sandbox'), '', 'no sandbox permission at all');
  const frame = await (await frameEl.elementHandle()).contentFrame();
  assert.ok(frame, 'the frame has a document');
  await frame.locator('#h').waitFor();
  await frame.waitForLoadState('load');
  assert.equal(await frame.locator('#h').innerText(), 'Preview page');
  assert.equal(await frame.locator('#h').evaluate((h) => getComputedStyle(h).color), 'rgb(200, 0, 0)', 'inline styles apply');
  // Clicking its link and its button navigates nowhere.
  await frame.locator('#out').click();
  await frame.locator('#go').click();
  await shot('html');

  // Inside the frame: no script ran, and a fetch to the probe server or to
  // the API fails (the CSP's default-src 'none').
  assert.match(await tryFetch(frame, `${probeOrigin}/from-frame`), /^blocked/);
  assert.match(await tryFetch(frame, `${server.origin}/api/workspaces`), /^blocked/);
  assert.equal(await frame.evaluate(() => document.title), 'probe-page', 'the page script never ran');
  assert.equal(frame.url(), 'about:srcdoc', 'the frame was never navigated (no refresh, link or form)');
  assert.equal(await page.title(), await page.evaluate(() => document.title));
  // Settle: the frame's load event has fired and every attempt above has
  // finished; nothing reached the probe server.
  assert.deepEqual(probed, [], `the probe server was reached: ${probed.join(', ')}`);

  // The page with the app shell is unaffected.
  await page.getByTestId('artifacts-view').waitFor();
  assert.notEqual(await page.title(), 'api-reached');

  // The preview route opened as a page of its own (no app around it, so
  // no inherited policy): its own CSP sandboxes it and the rewritten page
  // still reaches nothing.
  const htmlId = list.find((a) => a.kind === 'html').artifactId;
  const direct = await context.newPage();
  const resp = await direct.goto(`${server.origin}/api/artifacts/${htmlId}/preview`);
  assert.equal(resp?.status(), 200);
  assert.match(resp?.headers()['content-security-policy'] ?? '', /default-src 'none'.*sandbox/);
  await direct.locator('#h').waitFor();
  await direct.waitForLoadState('load');
  assert.match(await tryFetch(direct, `${probeOrigin}/from-route`), /^blocked/);
  assert.match(await tryFetch(direct, `${server.origin}/api/workspaces`), /^blocked/);
  assert.equal(await direct.title(), 'probe-page', 'the page script never ran');
  await direct.close();
  assert.deepEqual(probed, [], `the probe server was reached: ${probed.join(', ')}`);

  // At 800×600 the page fits the window: nothing runs past its right edge.
  await page.setViewportSize({ width: 800, height: 600 });
  await page.locator('[data-testid="artifact-item"][data-kind="document"]').click();
  await page.getByTestId('artifact-document').waitFor();
  const wide = await page.evaluate(() => {
    const vw = document.documentElement.clientWidth;
    return [...document.querySelectorAll('[data-testid="artifacts-view"] *')]
      .filter((el) => el.getBoundingClientRect().right > vw + 1)
      .map((el) => `${el.tagName.toLowerCase()}.${String(el.className).trim()}`);
  });
  assert.deepEqual(wide, [], 'elements past the window at 800×600');
  await shot('800x600');
});
