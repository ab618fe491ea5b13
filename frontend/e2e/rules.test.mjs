// Issue 21, rules where the user wants them, end to end: with the default
// setting, "Always allow in this workspace" for `git status` writes its rule
// under AgentHub's data directory, so the workspace's `git status` stays
// clean; the second identical call runs without asking; the rule shows in
// Settings with its file and who added it, and revoking it there (after a
// confirmation) removes it and is audited. Against the real `agenthub serve`
// in the system Chromium. Env as serve.test.mjs.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { ARTIFACTS } from './harness.mjs';
import { checkA11y } from './a11y.mjs';
import { gitWorkspace, startPlaybook, startRun, stopPlaybook, waitCompleted } from './playbook.mjs';

const playbook = `version = 1
name = "status-twice"

[[step]]
say = "Checking the tree."
[[step.call]]
tool = "run_shell"
args = { command = "git status --short" }

[[step]]
say = "Checking again."
[[step.call]]
tool = "run_shell"
args = { command = "git status --short" }

[[step]]
say = "Done."
`;

/** @type {Awaited<ReturnType<typeof startPlaybook>>} */
let env;

before(async () => {
  env = await startPlaybook('status-twice', playbook, { width: 1280, height: 820 });
});

after(async () => {
  await stopPlaybook(env);
});

const api = async (path, init = {}) => {
  const res = await fetch(env.server.origin + path, {
    ...init,
    headers: { Authorization: `Bearer ${env.server.token}`, 'Content-Type': 'application/json', ...init.headers },
  });
  return { status: res.status, body: await res.json() };
};

test('always allow with the default setting leaves git status clean; the rule is listed in Settings and revoked there', async () => {
  const { dir, ws } = await gitWorkspace(env, 'README.md', 'hello\n');
  const page = await startRun(env, ws, 'status-twice', 'check the tree twice');

  const dialog = page.locator('[data-testid="approval-dialog"][data-kind="shell"]');
  await dialog.waitFor();
  // With the mouse, as a user does: the effect line follows the hovered
  // button, and its height is fixed so the buttons stay under the pointer.
  await dialog.getByTestId('decide-always_allow_workspace').click();
  // The dialog asks to confirm a workspace rule and says where it is written.
  const yes = dialog.getByTestId('rule-confirm-yes');
  await yes.waitFor({ timeout: 15_000 });
  await page.screenshot({ path: join(ARTIFACTS, 'rules-confirm.png') });
  await yes.click();
  // One approval only: the second `git status` is covered by the rule.
  await waitCompleted(env, page);

  const status = execFileSync('git', ['status', '--porcelain', '--untracked-files=all', '--ignored'], { cwd: dir, encoding: 'utf8' });
  assert.equal(status, '', 'the workspace is clean: the rule is not in the repository');
  assert.equal(existsSync(join(dir, '.agenthub')), false, 'no .agenthub/ was created');
  const approvals = await api(`/api/runs/${encodeURIComponent(await page.getByTestId('run-view').getAttribute('data-run-id'))}/events?after=0&limit=500`);
  const asked = approvals.body.filter((e) => e.type === 'run.approval.requested');
  assert.equal(asked.length, 1, 'only the first git status asked');
  assert.deepEqual(asked[0].payload.rule_location, { site: 'data', path: `policy/${ws.id}.toml` });

  // Settings lists the rule with its file and who added it.
  await page.goto(`${env.server.origin}/#/settings`);
  const viewer = page.getByTestId('policy-viewer');
  await viewer.waitFor();
  await viewer.getByTestId('policy-workspace').selectOption(ws.id);
  const row = viewer.locator('[data-testid="policy-rule"][data-site="data"]');
  await row.waitFor();
  assert.match(await row.getByTestId('policy-rule-file').innerText(), new RegExp(`policy/${ws.id}\\.toml`));
  assert.match(await row.getByTestId('policy-rule-added').innerText(), /\(browser\)/);
  assert.equal(await page.getByTestId('rule-location-data').isChecked(), true, 'the data directory is the default');
  await row.scrollIntoViewIfNeeded();
  await viewer.screenshot({ path: join(ARTIFACTS, 'rules-settings.png') });
  await checkA11y(assert, page, ARTIFACTS, 'rules-settings', { include: '[data-testid="policy-viewer"]' });

  // Revoke: asks first, then removes it and audits it.
  await row.getByTestId('policy-revoke').click();
  await row.getByTestId('policy-revoke-yes').click();
  await viewer.locator('[data-testid="policy-rule"][data-site="data"]').waitFor({ state: 'detached' });
  const view = await api(`/api/workspaces/${ws.id}/policy`);
  assert.equal(view.body.rules.length, 0, 'no rule left');
  const audit = await api('/api/audit?kind=policy.rule_revoked');
  assert.equal(audit.body.length, 1);
  assert.equal(audit.body[0].data.workspaceId, ws.id);
  assert.equal(execFileSync('git', ['status', '--porcelain'], { cwd: dir, encoding: 'utf8' }), '');
});

test('a wrong token in the browser is a page that says what to do, not raw JSON', async () => {
  await env.context.clearCookies(); // the first test's page load left the right token as a cookie
  const page = await env.context.newPage();
  page.setDefaultTimeout(30_000);
  const res = await page.goto(`${env.server.origin}/?token=wrong`);
  assert.equal(res?.status(), 401);
  const text = await page.locator('body').innerText();
  assert.match(text, /This page is not signed in/);
  assert.match(text, /agenthub serve/);
  assert.doesNotMatch(text, /"code"/);
  assert.equal(await page.locator('body').getAttribute('data-code'), 'unauthorized');
  await page.screenshot({ path: join(ARTIFACTS, 'rules-unauthorized.png') });
  await checkA11y(assert, page, ARTIFACTS, 'unauthorized');
  await page.close();
});
