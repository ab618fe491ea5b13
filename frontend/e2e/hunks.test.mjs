// Per-hunk review in the browser, end to end: a playbook profile edits a
// committed file in two places; in the approval dialog the reviewer keeps
// the first change, unticks the second and says why; only the first lands
// on disk, and the playbook's next step checks that the agent was told
// which hunk was rejected (else the run fails). Against the real
// `agenthub serve` in the system Chromium. Env as serve.test.mjs.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { ARTIFACTS } from './harness.mjs';
import { gitWorkspace, startPlaybook, startRun, stopPlaybook, waitCompleted } from './playbook.mjs';

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

/** @type {Awaited<ReturnType<typeof startPlaybook>>} */
let env;

before(async () => {
  env = await startPlaybook('two-hunks', playbook, { width: 1280, height: 820 });
});

after(async () => {
  await stopPlaybook(env);
});

test('approve one hunk, reject the other: only the approved hunk is written', async () => {
  const { dir, ws } = await gitWorkspace(env, 'notes.txt', original);
  const page = await startRun(env, ws, 'two-hunks', 'change two lines');

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
  await waitCompleted(env, page);
  assert.equal(await readFile(join(dir, 'notes.txt'), 'utf8'), firstOnly, 'exactly the approved hunk is on disk');
  await page.screenshot({ path: join(ARTIFACTS, 'hunks-completed.png') });
});
