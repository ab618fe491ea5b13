// The Changes panel end to end (issue 18): a playbook profile proposes three
// writes in one step, put to the reviewer together; in the run's Changes
// panel the reviewer sees the three files with their diffs, comments on a
// line of one, approves two in one action (two decisions; the third left
// out) and then rejects the third; the playbook's next step checks that the agent was
// told the comment (else the run fails); then one applied change is reverted
// from the panel and its file is back as it was; the write_file row shows
// its diff instead of its JSON arguments. Against the real
// `agenthub serve` in the system Chromium. Env as serve.test.mjs.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { access, mkdtemp, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ARTIFACTS, playbookSession } from './harness.mjs';

const original = 'line 1\nline 2\nline 3\n';
const edited = 'line 1\nline two\nline 3\n';

const playbook = `version = 1
name = "three-files"

[[step]]
say = "I'll change notes.txt and add two files."
[[step.call]]
tool = "write_file"
args = { path = "notes.txt", content = "line 1\\nline two\\nline 3\\n" }
[[step.call]]
tool = "write_file"
args = { path = "bee.txt", content = "bee\\n" }
[[step.call]]
tool = "write_file"
args = { path = "sea.txt", content = "sea\\n" }

[[step]]
expect = ["Reviewer comments on this change:", "notes.txt line 2: spell it out"]
say = "Understood."
`;

/** @type {Awaited<ReturnType<typeof playbookSession>>} */
let session;

before(async () => {
  session = await playbookSession('three-files', playbook, { extra: 'executor = "parallel_batch_approval"\n', viewport: { width: 1280, height: 900 } });
});

after(async () => {
  await session?.close();
});

const exists = (p) => access(p).then(() => true, () => false);

test('three files reviewed in the Changes panel, decided in one action, one reverted, a comment the agent receives', async () => {
  const { server, context } = session;
  const dir = await mkdtemp(join(session.scratch, 'ws-'));
  const git = (...args) => execFileSync('git', ['-c', 'user.name=e2e', '-c', 'user.email=e2e@example.com', ...args], { cwd: dir });
  git('init', '-q');
  await writeFile(join(dir, 'notes.txt'), original);
  git('add', 'notes.txt');
  git('commit', '-q', '-m', 'init');
  const res = await session.api('/api/workspaces', { method: 'POST', body: JSON.stringify({ path: dir }) });
  assert.equal(res.status, 200, await res.clone().text());
  const ws = await res.json();

  const page = context.pages()[0] ?? (await context.newPage());
  page.setDefaultTimeout(30_000);
  await page.goto(server.url);
  await page.getByTestId('new-run-workspace').or(page.getByTestId('nav-new-run')).first().waitFor();
  if (!(await page.getByTestId('new-run-workspace').isVisible())) await page.getByTestId('nav-new-run').click();
  await page.getByTestId('new-run-workspace').selectOption(ws.id);
  await page.getByTestId('new-run-profile').selectOption('three-files');
  await page.getByTestId('new-run-task').fill('change three files');
  await page.getByTestId('new-run-submit').click();

  const panel = page.getByTestId('changes-panel');
  const choose = panel.getByTestId('changes-choose');
  // The three proposals wait together; an approval dialog that opens by
  // itself is closed without deciding (Escape), the panel decides.
  const deadline = Date.now() + 60_000;
  while ((await choose.count()) < 3) {
    if (Date.now() > deadline) throw new Error(`the panel shows ${await choose.count()} pending proposals, want 3`);
    const dialog = page.getByTestId('approval-dialog');
    if (await dialog.isVisible().catch(() => false)) await page.keyboard.press('Escape');
    await page.waitForTimeout(200);
  }
  while (await page.getByTestId('approval-dialog').isVisible().catch(() => false)) {
    await page.keyboard.press('Escape');
    await page.waitForTimeout(100);
  }
  const files = panel.getByTestId('changes-file');
  assert.deepEqual(
    await files.evaluateAll((els) => els.map((e) => [e.getAttribute('data-path'), e.getAttribute('data-state')])),
    [
      ['bee.txt', 'proposed'],
      ['notes.txt', 'proposed'],
      ['sea.txt', 'proposed'],
    ],
  );
  await panel.locator('[data-path="notes.txt"]').getByRole('button', { name: 'notes.txt' }).click();
  assert.match(await panel.textContent(), /line two/, 'the focused file shows its diff');

  await panel.getByTestId('changes-comment-from').fill('2');
  await panel.getByTestId('changes-comment-to').fill('2');
  await panel.getByTestId('changes-comment-text').fill('spell it out');
  await panel.getByTestId('changes-comment-add').click();
  await panel.getByTestId('changes-comments').getByText('spell it out').waitFor();

  // Leave sea.txt out: approve the other two in one action.
  await panel.locator('[data-path="sea.txt"]').getByTestId('changes-choose').uncheck();
  await page.screenshot({ path: join(ARTIFACTS, 'changes-review.png') });
  assert.equal(await readFile(join(dir, 'notes.txt'), 'utf8'), original, 'nothing is written before the decision');
  await panel.getByTestId('changes-approve').click();
  // The one left out is still pending; reject it.
  await panel.locator('[data-path="sea.txt"][data-state="proposed"]').getByTestId('changes-choose').waitFor();
  await panel.getByTestId('changes-reject').click();

  await page
    .locator('[data-testid="run-state"][data-state="Completed"]')
    .waitFor({ timeout: 60_000 })
    .catch(async (err) => {
      const runId = await page.getByTestId('run-view').getAttribute('data-run-id');
      const run = await session.api(`/api/runs/${runId}`);
      throw new Error(`the run did not complete (the agent must receive the comment): ${await run.text()}`, { cause: err });
    });
  assert.equal(await readFile(join(dir, 'notes.txt'), 'utf8'), edited);
  assert.equal(await readFile(join(dir, 'bee.txt'), 'utf8'), 'bee\n');
  assert.equal(await exists(join(dir, 'sea.txt')), false, 'the rejected file was not written');
  await panel.locator('[data-path="sea.txt"][data-state="rejected"]').waitFor();

  // Revert notes.txt alone from the panel.
  await panel.locator('[data-path="notes.txt"][data-state="applied"]').getByTestId('changes-revert').click();
  await panel.locator('[data-path="notes.txt"][data-state="reverted"]').waitFor();
  await panel.getByTestId('changes-notice').waitFor();
  assert.equal(await readFile(join(dir, 'notes.txt'), 'utf8'), original, 'the reverted file holds what it held before');
  assert.equal(await readFile(join(dir, 'bee.txt'), 'utf8'), 'bee\n', 'the other change stays');
  await page.screenshot({ path: join(ARTIFACTS, 'changes-reverted.png') });

  // The write_file row shows the diff it asked for, not its escaped arguments.
  const row = page.locator('[data-testid="timeline-tool"][data-tool="write_file"]').filter({ hasText: 'notes.txt' }).first();
  await row.locator('summary').click();
  await row.getByTestId('tool-diff').getByText('line two').waitFor();
  assert.equal(await row.getByTestId('tool-arguments').count(), 0, 'no escaped JSON arguments');

  const runId = await page.getByTestId('run-view').getAttribute('data-run-id');
  const audit = await (await session.api(`/api/audit?runId=${runId}`)).json();
  const kinds = audit.map((a) => a.kind);
  assert.ok(kinds.includes('review.comments'), `the decision's audit names the comment: ${kinds}`);
  assert.ok(kinds.includes('patch.undone'), `the revert is audited: ${kinds}`);
});
