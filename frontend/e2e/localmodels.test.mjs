// Browser end-to-end test of the settings page's "Local models" section:
// `agenthub serve` with AGENTHUB_LOCAL_SERVERS pointing at a fake Ollama
// (GET /api/tags) and a fake LM Studio (GET /v1/models), both tiny node
// HTTP servers on loopback. The section lists them with their models; once
// they stop, Refresh shows the empty state. axe-core checks both states, in
// English and in 中文. Env as for serve.test.mjs.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { createServer } from 'node:http';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { chromium } from 'playwright-core';
import { checkA11y } from './a11y.mjs';
import { ARTIFACTS, CHROMIUM, startServer, stopServer } from './harness.mjs';

let server;
/** @type {import('playwright-core').BrowserContext} */
let context;
/** @type {import('playwright-core').Page} */
let page;
let scratch = '';
/** @type {import('node:http').Server[]} */
const fakes = [];

/** A loopback server answering path with body, and 404 elsewhere. */
async function fake(path, body) {
  const srv = createServer((req, res) => {
    if (req.method === 'GET' && req.url === path) {
      res.writeHead(200, { 'Content-Type': 'application/json' });
      res.end(JSON.stringify(body));
      return;
    }
    res.writeHead(404).end();
  });
  await new Promise((r) => srv.listen(0, '127.0.0.1', r));
  fakes.push(srv);
  return { srv, root: `http://127.0.0.1:${srv.address().port}` };
}

const close = (srv) => new Promise((r) => (srv.listening ? srv.close(() => r()) : r()));

let ollama;
let lmstudio;

before(async () => {
  scratch = await mkdtemp(join(tmpdir(), 'agenthub-e2e-local-'));
  await mkdir(ARTIFACTS, { recursive: true });
  ollama = await fake('/api/tags', { models: [{ name: 'qwen3:0.6b' }, { name: 'llama3.2:1b' }] });
  lmstudio = await fake('/v1/models', { object: 'list', data: [{ id: 'qwen2.5-coder-7b-instruct', object: 'model' }] });
  server = await startServer(join(scratch, 'home'), {
    AGENTHUB_LOCAL_SERVERS: `ollama=${ollama.root},lmstudio=${lmstudio.root}`,
  });
  context = await chromium.launchPersistentContext(join(scratch, 'profile'), {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1100, height: 720 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-sync'],
  });
  page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(15_000);
});

after(async () => {
  await context?.close();
  if (server) await stopServer(server);
  await Promise.all(fakes.map(close));
  if (scratch) await rm(scratch, { recursive: true, force: true });
});

test('the settings page lists the local model servers with their models, then the empty state after refresh', async () => {
  await page.goto(server.url + '#/settings');
  await page.getByTestId('settings').waitFor();
  const section = page.getByTestId('local-models');
  await section.getByTestId('local-server').first().waitFor();
  const servers = section.getByTestId('local-server');
  assert.deepEqual(await servers.evaluateAll((els) => els.map((e) => e.getAttribute('data-kind'))), ['ollama', 'lmstudio']);
  const first = servers.nth(0);
  assert.equal(await first.getByTestId('local-server-url').innerText(), `${ollama.root}/v1`);
  assert.deepEqual(
    await first.getByTestId('local-model').evaluateAll((els) => els.map((e) => e.getAttribute('data-model'))),
    ['llama3.2:1b', 'qwen3:0.6b'],
  );
  assert.match(await servers.nth(1).innerText(), /LM Studio[\s\S]*qwen2\.5-coder-7b-instruct/);
  await section.scrollIntoViewIfNeeded();
  await page.screenshot({ path: join(ARTIFACTS, 'local-models-found.png'), fullPage: true });
  await checkA11y(assert, page, ARTIFACTS, 'local-models-found');

  await Promise.all(fakes.map(close));
  await section.getByTestId('local-models-refresh').click();
  await section.getByTestId('local-models-empty').waitFor();
  assert.match(await section.getByTestId('local-models-empty').innerText(), /No local model server found on loopback/);
  await checkA11y(assert, page, ARTIFACTS, 'local-models-empty');

  await page.getByTestId('settings-language-zh-CN').click();
  await page.getByText('在回环地址上未找到本地模型服务').waitFor();
  assert.equal(await section.getByTestId('local-models-refresh').innerText(), '刷新');
  await checkA11y(assert, page, ARTIFACTS, 'local-models-empty-zh');
});
