// The UI benchmark's browser half (run it through bench/ui/run.sh, which
// seeds the data directory): starts `agenthub serve` on the seeded home,
// opens the run in the system Chromium with a fresh profile each time, and
// measures
//   - first rows: ms from navigation start to the first frame that shows
//     timeline rows (requestAnimationFrame after they enter the DOM);
//   - loaded: ms until the whole history is applied (the loading status is
//     gone and every row is counted);
//   - scrolling: a sweep from the bottom to the top in 120 jumps and 100
//     wheel-sized steps, ms from each scroll to its painted frame;
//   - heap: used JS heap after scrolling, after a forced GC (CDP);
//   - DOM: rows in the DOM after scrolling;
//   - the 10,000-line diff: ms to show it, rows in the DOM, N×5, split view.
// A benchmark, not a test: it reports numbers and exits 0 unless the page
// breaks. Goals (docs/PERFORMANCE.md): first rows < 1 s, heap < 150 MB.
import { createRequire } from 'node:module';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(fileURLToPath(new URL('../..', import.meta.url)));
const require = createRequire(join(ROOT, 'frontend', 'package.json'));
const { chromium } = require('playwright-core');
const { startServer, stopServer, CHROMIUM } = await import(join(ROOT, 'frontend', 'e2e', 'harness.mjs'));

const { values: args } = parseArgs({
  options: { home: { type: 'string' }, run: { type: 'string' }, events: { type: 'string', default: '100000' }, runs: { type: 'string', default: '3' } },
});
const ARTIFACTS = process.env.BENCH_ARTIFACTS ?? join(ROOT, 'artifacts', 'bench-ui');

/** Installed before any page script: notes the first frame with timeline rows. */
function probe() {
  const b = (window.__bench = { firstRows: null });
  const seen = () => document.querySelector('[data-testid="timeline"] > li');
  const mo = new MutationObserver(() => {
    if (b.firstRows !== null || !seen()) return;
    mo.disconnect();
    requestAnimationFrame(() => (b.firstRows = performance.now()));
  });
  mo.observe(document, { childList: true, subtree: true });
}

const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.floor((s.length - 1) / 2)] : NaN;
};
const pct = (xs, p) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length ? s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] : NaN;
};
const mb = (b) => Math.round((b / 1048576) * 10) / 10;

async function once(server, i) {
  const profile = await mkdtemp(join(tmpdir(), 'agenthub-bench-profile-'));
  const context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 820 },
    args: ['--headless', '--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
  try {
    const page = context.pages()[0] ?? (await context.newPage());
    page.setDefaultTimeout(120_000);
    await page.addInitScript(probe);
    const cdp = await context.newCDPSession(page);
    await cdp.send('Performance.enable');
    /** Main-thread busy time (ms) of the renderer so far: moves much less than wall time on a loaded machine. */
    const busy = async () => {
      const { metrics } = await cdp.send('Performance.getMetrics');
      const get = (n) => metrics.find((x) => x.name === n)?.value ?? 0;
      return Math.round(get('TaskDuration') * 1000);
    };
    await page.goto(`${server.url}#/run/${encodeURIComponent(args.run)}`);
    await page.waitForFunction(() => window.__bench.firstRows !== null);
    const firstRows = await page.evaluate(() => window.__bench.firstRows);
    const firstRowsBusy = await busy();
    await page.waitForFunction(
      (n) => {
        const ol = document.querySelector('[data-testid="timeline"]');
        return ol && !document.querySelector('[data-testid="timeline-loading"]') && Number(ol.dataset.count) > n;
      },
      Number(args.events) / 10,
    );
    const loaded = await page.evaluate(() => performance.now());
    const loadedBusy = await busy();
    const rows = await page.evaluate(() => Number(document.querySelector('[data-testid="timeline"]').dataset.count));

    // Scrolling: jumps through the whole run, then wheel-sized steps.
    const scroll = await page.evaluate(async () => {
      const el = document.querySelector('[data-testid="run-scroll"]');
      const frame = () => new Promise((r) => requestAnimationFrame(() => r(null)));
      const times = [];
      const to = async (y) => {
        const t = performance.now();
        el.scrollTop = y;
        await frame();
        await frame();
        times.push(performance.now() - t);
      };
      for (let k = 120; k >= 0; k--) await to(((el.scrollHeight - el.clientHeight) * k) / 120);
      const jumps = times.splice(0);
      for (let k = 0; k < 100; k++) await to(el.scrollTop + 600);
      return { jumps, steps: times.splice(0), maxDom: document.querySelectorAll('[data-testid="timeline"] > li').length };
    });
    // Language and theme switches re-wrap every row: the row at the top of the view must not move.
    const topRow = () =>
      page.evaluate(async () => {
        const f = () => new Promise((r) => requestAnimationFrame(r));
        await f();
        await f();
        await f();
        const el = document.querySelector('[data-testid="run-scroll"]');
        const top = el.getBoundingClientRect().top + 60;
        const li = [...document.querySelectorAll('[data-testid="timeline"] > li')].find((l) => l.getBoundingClientRect().bottom > top);
        return { seq: li?.dataset.seq, y: li?.getBoundingClientRect().top ?? 0 };
      });
    await page.evaluate(() => {
      const el = document.querySelector('[data-testid="run-scroll"]');
      el.scrollTop = el.scrollHeight / 2;
    });
    const before = await topRow();
    await page.getByTestId('language-zh-CN').click();
    await page.getByTestId('theme-dark').click();
    const after = await topRow();
    await page.getByTestId('language-en').click();
    await page.getByTestId('theme-light').click();
    const switchShift = after.seq === before.seq ? Math.abs(after.y - before.y) : Infinity;
    const domRows = await page.evaluate(() => document.querySelectorAll('[data-testid="timeline"] > li').length);
    const domNodes = await page.evaluate(() => document.getElementsByTagName('*').length);
    await cdp.send('HeapProfiler.collectGarbage');
    const heapScrolled = (await cdp.send('Runtime.getHeapUsage')).usedSize;
    if (i === 0) await page.screenshot({ path: join(ARTIFACTS, 'timeline-scrolled.png') });

    // The 10,000-line diff: the first applied patch (near the top of the run).
    const found = await page.evaluate(async () => {
      const el = document.querySelector('[data-testid="run-scroll"]');
      const frame = () => new Promise((r) => requestAnimationFrame(() => r(null)));
      for (let y = 0; y < el.scrollHeight; y += 1500) {
        el.scrollTop = y;
        await frame();
        await frame();
        const row = document.querySelector('[data-testid="timeline-patch"]');
        if (row) {
          row.scrollIntoView({ block: 'start' });
          await frame();
          await frame();
          return true;
        }
      }
      return false;
    });
    let diff = null;
    if (found) {
      const toggle = page.getByTestId('timeline-patch-toggle').first();
      const b0 = await busy();
      const t0 = await page.evaluate(() => performance.now());
      await toggle.click();
      await page.waitForFunction(() => document.querySelectorAll('[data-testid="diff-view"] tr').length > 0);
      const shown = (await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => r(performance.now()))))) - t0;
      const shownBusy = (await busy()) - b0;
      const diffDom = await page.evaluate(() => document.querySelectorAll('[data-testid="diff-view"] tr').length);
      const stats = await page.evaluate(() => document.querySelector('[data-testid="diff-view"] .summary')?.textContent?.trim());
      await page.getByTestId('diff-scroll').first().focus();
      const navs = [];
      for (let k = 0; k < 5; k++) {
        const t = await page.evaluate(() => performance.now());
        await page.keyboard.press('n');
        await page.waitForFunction(() => document.activeElement?.closest('[data-testid="diff-hunk"]'));
        navs.push((await page.evaluate(() => performance.now())) - t);
      }
      const t1 = await page.evaluate(() => performance.now());
      await page.getByTestId('diff-mode-split').first().click();
      await page.waitForFunction(() => document.querySelector('[data-testid="diff-view"][data-mode="split"] tr.pair'));
      const split = (await page.evaluate(() => new Promise((r) => requestAnimationFrame(() => r(performance.now()))))) - t1;
      await page.waitForTimeout(500); // let the visible chunks be coloured
      if (i === 0) await page.screenshot({ path: join(ARTIFACTS, 'diff-10k-split.png') });
      await page.getByTestId('diff-mode-unified').first().click();
      await cdp.send('HeapProfiler.collectGarbage');
      diff = { shown, shownBusy, domRows: diffDom, stats, nextHunk: navs, split, heap: (await cdp.send('Runtime.getHeapUsage')).usedSize };
    }
    return { firstRows, firstRowsBusy, loaded, loadedBusy, rows, scroll, switchShift, domRows, domNodes, heapScrolled, diff };
  } finally {
    await context.close();
    await rm(profile, { recursive: true, force: true });
  }
}

const server = await startServer(args.home);
const results = [];
try {
  const { mkdir } = await import('node:fs/promises');
  await mkdir(ARTIFACTS, { recursive: true });
  for (let i = 0; i < Number(args.runs); i++) {
    const r = await once(server, i);
    results.push(r);
    console.log(
      `run ${i + 1}: first rows ${r.firstRows.toFixed(0)} ms (main thread busy ${r.firstRowsBusy} ms), history loaded ${r.loaded.toFixed(0)} ms (busy ${r.loadedBusy} ms; ${r.rows} rows), ` +
        `scroll jump p50/p95 ${median(r.scroll.jumps).toFixed(1)}/${pct(r.scroll.jumps, 95).toFixed(1)} ms, step p50/p95 ${median(r.scroll.steps).toFixed(1)}/${pct(r.scroll.steps, 95).toFixed(1)} ms, ` +
        `top row moved ${r.switchShift} px on a language+theme switch, ${r.domRows} rows in the DOM, heap after scrolling ${mb(r.heapScrolled)} MB` +
        (r.diff
          ? `; diff (${r.diff.stats}) shown in ${r.diff.shown.toFixed(0)} ms (busy ${r.diff.shownBusy} ms) with ${r.diff.domRows} rows in the DOM, next hunk p50 ${median(r.diff.nextHunk).toFixed(0)} ms, split in ${r.diff.split.toFixed(0)} ms, heap ${mb(r.diff.heap)} MB`
          : '; no patch row found'),
    );
  }
} finally {
  await stopServer(server);
}
const summary = {
  events: Number(args.events),
  rows: results[0]?.rows,
  runs: results.length,
  firstRowsMs: median(results.map((r) => r.firstRows)),
  firstRowsBusyMs: median(results.map((r) => r.firstRowsBusy)),
  historyLoadedMs: median(results.map((r) => r.loaded)),
  historyLoadedBusyMs: median(results.map((r) => r.loadedBusy)),
  scrollJumpP95Ms: median(results.map((r) => pct(r.scroll.jumps, 95))),
  scrollStepP95Ms: median(results.map((r) => pct(r.scroll.steps, 95))),
  switchShiftPx: Math.max(...results.map((r) => r.switchShift)),
  domRowsAfterScroll: median(results.map((r) => r.domRows)),
  heapAfterScrollMB: mb(median(results.map((r) => r.heapScrolled))),
  diffShownMs: median(results.filter((r) => r.diff).map((r) => r.diff.shown)),
  diffShownBusyMs: median(results.filter((r) => r.diff).map((r) => r.diff.shownBusy)),
  diffDomRows: median(results.filter((r) => r.diff).map((r) => r.diff.domRows)),
  heapWithDiffMB: mb(median(results.filter((r) => r.diff).map((r) => r.diff.heap))),
};
const { loadavg } = await import('node:os');
console.log(`median of ${summary.runs}: ${JSON.stringify(summary)}`);
console.log(`load average at the end: ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);
console.log(`goals: first rows < 1000 ms: ${summary.firstRowsMs < 1000 ? 'met' : 'MISSED'}; heap < 150 MB: ${summary.heapAfterScrollMB < 150 ? 'met' : 'MISSED'}`);
