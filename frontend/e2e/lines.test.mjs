// Per-line review in the browser, end to end (issue 18): a playbook rewrites
// every third line of a committed file, which is one hunk; at 800×600 the
// reviewer moves to it with J, leaves it out with Space, chooses lines with
// L and ticks exactly two (the removal and the addition of line 6); only
// that rewrite lands on disk, and the playbook's next step checks that the
// agent was told each line left out (else the run fails). Also: the dialog
// opens with focus on the decisions, the wider scopes are disabled with the
// reason, and the diff gets at least half of the dialog's height (also at
// 900×700). Against the real
// `agenthub serve` in the system Chromium. Env as serve.test.mjs.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { checkA11y } from './a11y.mjs';
import { ARTIFACTS } from './harness.mjs';
import { gitWorkspace, startPlaybook, startRun, stopPlaybook, waitCompleted } from './playbook.mjs';

const lines = Array.from({ length: 20 }, (_, i) => `line ${i + 1}`);
const original = lines.join('\n') + '\n';
const everyThird = lines.map((l, i) => ((i + 1) % 3 === 0 ? `${l} (rewritten)` : l)).join('\n') + '\n';
const sixOnly = lines.map((l, i) => (i === 5 ? `${l} (rewritten)` : l)).join('\n') + '\n';

const playbook = `version = 1
name = "every-third"

[[step]]
say = "I'll rewrite every third line of notes.txt."
[[step.call]]
tool = "write_file"
args = { path = "notes.txt", content = """
${everyThird}""" }

[[step]]
expect = ['old line 3 "line 3" was kept', '"line 9 (rewritten)" was not added', 'only line 6']
say = "Understood: only line 6 was rewritten."
`;

/** @type {Awaited<ReturnType<typeof startPlaybook>>} */
let env;

before(async () => {
  env = await startPlaybook('every-third', playbook, { width: 800, height: 600 });
});

after(async () => {
  await stopPlaybook(env);
});

test('choose two lines of a one-hunk rewrite at 800×600: exactly those lines are written', async () => {
  const { dir, ws } = await gitWorkspace(env, 'notes.txt', original);
  const page = await startRun(env, ws, 'every-third', 'rewrite every third line');

  const dialog = page.locator('[data-testid="approval-dialog"][data-kind="patch"]');
  await dialog.waitFor();
  // Focus is on the decisions, never in the reason box.
  await page.waitForFunction(() => document.activeElement?.getAttribute('data-testid') === 'approval-decisions');
  const hunks = dialog.getByTestId('diff-hunk');
  assert.equal(await hunks.count(), 1, 'a rewrite of every third line is one hunk');

  // J focuses the hunk, Space leaves it out, L chooses its lines (none kept).
  await page.keyboard.press('j');
  await page.waitForFunction(() => document.activeElement?.getAttribute('data-testid') === 'diff-hunk');
  await page.keyboard.press(' ');
  assert.equal(await dialog.getByTestId('diff-hunk-select').isChecked(), false);
  await checkA11y(assert, page, ARTIFACTS, 'lines-hunk-left-out');
  await page.keyboard.press('l');
  const boxes = dialog.getByTestId('diff-line-select');
  assert.equal(await boxes.count(), 12, 'six rewrites: six removals and six additions');
  await dialog.getByLabel('Include the removal of line 6 of notes.txt').check();
  await dialog.getByLabel('Include added line 6 of notes.txt').check();
  const approve = dialog.getByTestId('decide-approve_once');
  assert.match(await approve.innerText(), /^Approve selected \(2 of 12\)/);
  assert.equal(await dialog.getByTestId('decide-approve_for_run').isDisabled(), true);
  assert.match(await dialog.getByTestId('scope-off').first().innerText(), /a partial approval applies once/);
  await dialog.getByTestId('approval-reason').fill('only line 6');

  // The diff gets at least half of the dialog's height at 800×600 and 900×700.
  for (const [width, height] of [
    [900, 700],
    [800, 600],
  ]) {
    await page.setViewportSize({ width, height });
    await page.waitForFunction((h) => window.innerHeight === h, height);
    const box = await dialog.boundingBox();
    const visibleDiff = await page.evaluate(() => {
      const body = document.querySelector('[data-testid="approval-dialog"] .body')?.getBoundingClientRect();
      const diff = document.querySelector('[data-testid="patch-preview"]')?.getBoundingClientRect();
      return body && diff ? Math.min(body.bottom, diff.bottom) - Math.max(body.top, diff.top) : 0;
    });
    await page.screenshot({ path: join(ARTIFACTS, `lines-${width}x${height}.png`) });
    assert.ok(box && box.height <= height, `the dialog fits the ${width}×${height} window (${box?.height})`);
    assert.ok(visibleDiff >= 0.5 * box.height, `at ${width}×${height} the diff shows ${visibleDiff}px of a ${box.height}px dialog`);
  }
  // Line mode, the disabled scopes and their reasons pass axe (serious and critical rules).
  await checkA11y(assert, page, ARTIFACTS, 'lines-800x600');
  assert.equal(await readFile(join(dir, 'notes.txt'), 'utf8'), original, 'nothing is written before the decision');

  await approve.click();

  // Completed only if the agent was told each line left out (the playbook's expect).
  await waitCompleted(env, page);
  assert.equal(await readFile(join(dir, 'notes.txt'), 'utf8'), sixOnly, 'exactly the two chosen lines are applied');
  await page.screenshot({ path: join(ARTIFACTS, 'lines-completed-800x600.png') });
});

test('the same choice in 中文 and the dark theme at 800×600: labels fit, axe passes', async () => {
  const { dir, ws } = await gitWorkspace(env, 'notes.txt', original);
  await settings({ theme: 'dark', language: 'zh-CN' });
  const page = await startRun(env, ws, 'every-third', '逐行选择');
  await page.waitForFunction(() => document.documentElement.lang === 'zh-CN');
  const dialog = page.locator('[data-testid="approval-dialog"][data-kind="patch"]');
  await dialog.waitFor();
  await page.waitForFunction(() => document.activeElement?.getAttribute('data-testid') === 'approval-decisions');
  await page.keyboard.press('j');
  await page.keyboard.press(' ');
  await page.keyboard.press('l');
  await dialog.locator('[data-testid="diff-line-select"][data-line="6"]').check();
  await dialog.locator('[data-testid="diff-line-select"][data-line="7"]').check();
  assert.match(await dialog.getByTestId('decide-approve_once').innerText(), /批准所选（12 项中的 2 项）/);
  await page.screenshot({ path: join(ARTIFACTS, 'lines-800x600-zh-dark.png') });
  await checkA11y(assert, page, ARTIFACTS, 'lines-800x600-zh-dark');
  // Rejected: nothing is written; back to English and light for any later test.
  await dialog.getByTestId('decide-reject_and_stop').click();
  await dialog.waitFor({ state: 'detached' });
  assert.equal(await readFile(join(dir, 'notes.txt'), 'utf8'), original);
  await settings({ theme: 'light', language: 'en' });
});

/** Sets the theme and language as the settings page does (its toggles are not in the 800 px header). */
async function settings(body) {
  const res = await fetch(env.server.origin + '/api/settings', {
    method: 'PUT',
    headers: { Authorization: `Bearer ${env.server.token}`, 'Content-Type': 'application/json' },
    body: JSON.stringify(body),
  });
  assert.equal(res.status, 200, await res.text());
}
