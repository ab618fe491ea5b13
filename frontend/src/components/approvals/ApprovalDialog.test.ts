import { fireEvent, render, screen, within } from '@testing-library/svelte';
import { describe, expect, it } from 'vitest';
import { ApiError, type ApprovalRequest, type Decision } from '../../lib/api';
import { patchRequest, pushRequest, readRequest, shellRequest } from '../../lib/testdata/approvals';
import ApprovalDialog from './ApprovalDialog.svelte';
import DialogLoading from './DialogLoading.svelte';
import { m, setLocale } from '../../lib/i18n';

function setup(request: ApprovalRequest, fail?: ApiError) {
  const decisions: Decision[] = [];
  let dismissed = 0;
  const { unmount } = render(ApprovalDialog, {
    request,
    runTask: 'Give me a tour',
    onDecide: async (d: Decision) => {
      decisions.push(d);
      if (fail) throw fail;
    },
    onDismiss: () => dismissed++,
  });
  const dialog = screen.getByRole('dialog');
  return { decisions, dismissed: () => dismissed, dialog, unmount };
}

const settle = () => new Promise((r) => setTimeout(r, 0));

describe('ApprovalDialog', () => {
  it('is a labelled modal that puts focus on the decisions, not a button nor the reason box', () => {
    const { dialog } = setup(shellRequest);
    expect(dialog).toHaveAttribute('aria-modal', 'true');
    expect(dialog).toHaveAccessibleName('Run: git status --short');
    expect(screen.getByRole('group', { name: 'Decision' })).toHaveFocus();
    expect(screen.getByLabelText('Reason for the agent')).not.toHaveFocus();
  });

  it('pressing A right after it opens approves (issue 21: A typed "a" into the reason box)', async () => {
    const { decisions } = setup(patchRequest);
    const target = document.activeElement!;
    expect(target.tagName).not.toBe('TEXTAREA');
    await fireEvent.keyDown(target, { key: 'a' });
    await settle();
    expect(decisions.map((d) => d.decision)).toEqual(['approve_once']);
    expect((screen.getByLabelText('Reason for the agent') as HTMLTextAreaElement).value).toBe('');
  });

  it('keeps focus on its decisions when the loading stand-in or a previous dialog closes after it opened', async () => {
    const outside = document.createElement('textarea');
    document.body.append(outside);
    outside.focus();
    const loading = render(DialogLoading, { onDismiss: () => {} });
    const previous = render(ApprovalDialog, { request: shellRequest, onDecide: async () => {}, onDismiss: () => {} });
    const decisions: Decision[] = [];
    render(ApprovalDialog, { request: patchRequest, onDecide: async (d: Decision) => void decisions.push(d), onDismiss: () => {} });
    const mine = screen.getAllByRole('group', { name: 'Decision' }).at(-1)!;
    expect(mine).toHaveFocus();
    loading.unmount();
    previous.unmount();
    expect(mine).toHaveFocus();
    await fireEvent.keyDown(document.activeElement!, { key: 'a' });
    await settle();
    expect(decisions.map((d) => d.approvalId)).toEqual(['apr_patch']);
    expect(outside.value).toBe('');
    outside.remove();
  });

  it('Esc, the backdrop and the close button dismiss without deciding', async () => {
    const { decisions, dismissed } = setup(shellRequest);
    await fireEvent.keyDown(window, { key: 'Escape' });
    await fireEvent.click(screen.getByTestId('approval-backdrop'));
    await fireEvent.click(screen.getByRole('button', { name: 'Close without deciding' }));
    await settle();
    expect(dismissed()).toBe(3);
    expect(decisions).toEqual([]);
  });

  it('each button sends its decision with the subject hash', async () => {
    for (const [name, kind] of [
      ['Approve once', 'approve_once'],
      ['Approve for this run', 'approve_for_run'],
      ['Reject and stop', 'reject_and_stop'],
    ] as const) {
      const { decisions, unmount } = setup(shellRequest);
      await fireEvent.click(screen.getByRole('button', { name: new RegExp(`^${name}`) }));
      await settle();
      expect(decisions).toEqual([{ approvalId: 'apr_shell', toolCallId: 'call_s4_1', decision: kind, subjectHash: 'sha256:shellshell' }]);
      unmount();
    }
  });

  it('reject and tell sends the reason typed for the agent', async () => {
    const { decisions } = setup(shellRequest);
    await fireEvent.input(screen.getByLabelText('Reason for the agent'), { target: { value: 'Use git diff instead' } });
    await fireEvent.click(screen.getByRole('button', { name: /^Reject and tell the agent/ }));
    await settle();
    expect(decisions).toEqual([
      { approvalId: 'apr_shell', toolCallId: 'call_s4_1', decision: 'reject_and_tell', subjectHash: 'sha256:shellshell', reason: 'Use git diff instead' },
    ]);
  });

  it('A approves once and R rejects; typing in the reason field does neither', async () => {
    const a = setup(shellRequest);
    const reason = screen.getByLabelText('Reason for the agent');
    await fireEvent.keyDown(reason, { key: 'a' });
    await fireEvent.keyDown(reason, { key: 'r' });
    await settle();
    expect(a.decisions).toEqual([]);
    await fireEvent.keyDown(a.dialog, { key: 'a' });
    await settle();
    expect(a.decisions.map((d) => d.decision)).toEqual(['approve_once']);
    a.unmount();

    const r = setup(shellRequest);
    await fireEvent.keyDown(r.dialog, { key: 'R' });
    await settle();
    expect(r.decisions.map((d) => d.decision)).toEqual(['reject_and_tell']);
  });

  it('shows the exact command, the workspace-relative directory and the policy trace', () => {
    setup(shellRequest);
    expect(screen.getByTestId('shell-command')).toHaveTextContent('$ git status --short');
    expect(screen.getByTestId('shell-cwd')).toHaveTextContent(/^\.$/);
    const trace = screen.getByTestId('policy-trace');
    expect(within(trace).getByText('default:shell')).toBeInTheDocument();
    expect(within(trace).getByText('git log *')).toBeInTheDocument();
    expect(screen.getByTestId('approval-dialog')).toHaveAttribute('data-tier', 'shell');
  });

  it('lists the workspace files a command runs, bound into the approval', () => {
    const files = [
      { path: 'Makefile', sha256: '0123456789abcdef0123', why: 'makefile of make' },
      { path: 'GNUmakefile', sha256: 'absent', why: 'makefile of make' },
      { path: 'link.sh', sha256: 'unreadable', why: 'script of bash', note: 'resolves outside the workspace' },
    ];
    setup({ ...shellRequest, preview: { ...(shellRequest.preview as Record<string, unknown>), command: 'make && bash link.sh', files } });
    const items = within(screen.getByTestId('shell-files')).getAllByRole('listitem');
    expect(items.map((li) => li.textContent)).toEqual([
      'Makefile makefile of make · sha256 0123456789ab',
      'GNUmakefile makefile of make · does not exist yet',
      'link.sh script of bash · cannot be read, its content is not bound: resolves outside the workspace',
    ]);
    expect(screen.getByText(/if one changes before the command runs, nothing runs/)).toBeInTheDocument();
  });

  it('shows the diff coloured by line, and sends only the hunks left checked', async () => {
    const { decisions } = setup(patchRequest);
    const rows = screen.getByTestId('diff-file').querySelectorAll('tr');
    expect([...rows].map((r) => r.dataset.op)).toEqual(['context', 'delete', 'add', 'context', 'context', 'add', 'context']);
    expect(rows[2]).toHaveClass('add');
    expect(rows[1]).toHaveClass('delete');
    expect(rows[2]!.querySelector('mark')).toHaveTextContent('new');

    await fireEvent.click(screen.getByLabelText('Include change 1 of NOTES.md'));
    expect(screen.getByTestId('approval-effect')).toHaveTextContent(/^Only the selected changes \(1\) will be approved\.$/);
    await fireEvent.click(screen.getByRole('button', { name: /^Approve selected \(1 of 2\)/ }));
    await settle();
    expect(decisions).toEqual([
      { approvalId: 'apr_patch', toolCallId: 'call_s3_1', decision: 'approve_once', subjectHash: 'sha256:patchpatch', hunks: [{ path: 'NOTES.md', index: 1 }] },
    ]);
  });

  it('N and P move focus between hunks', async () => {
    const { dialog } = setup(patchRequest);
    const hunks = screen.getAllByTestId('diff-hunk');
    await fireEvent.keyDown(dialog, { key: 'n' });
    expect(hunks[0]).toHaveFocus();
    await fireEvent.keyDown(hunks[0]!, { key: 'n' });
    expect(hunks[1]).toHaveFocus();
    await fireEvent.keyDown(hunks[1]!, { key: 'n' });
    expect(hunks[1]).toHaveFocus();
    await fireEvent.keyDown(hunks[1]!, { key: 'p' });
    expect(hunks[0]).toHaveFocus();
  });

  it('with every hunk unchecked, nothing can be approved, only rejected', async () => {
    const { decisions, dialog } = setup(patchRequest);
    await fireEvent.click(screen.getByLabelText('Include all changes to NOTES.md'));
    expect(screen.getByRole('button', { name: /^Approve selected \(0 of 2\)/ })).toBeDisabled();
    expect(screen.getByRole('button', { name: /^Approve for this run/ })).toBeDisabled();
    await fireEvent.keyDown(dialog, { key: 'a' });
    await settle();
    expect(decisions).toEqual([]);
    await fireEvent.click(screen.getByRole('button', { name: /^Reject and stop/ }));
    await settle();
    expect(decisions.map((d) => d.decision)).toEqual(['reject_and_stop']);
  });

  it('keeps always-allow in view, disabled with the reason, when no rule describes the request', () => {
    const plain = setup(shellRequest);
    const always = screen.getByRole('button', { name: 'Always allow in this workspace' });
    expect(always).toBeDisabled();
    expect(always).toHaveAccessibleDescription(/no rule can describe exactly this request/);
    expect(screen.getByTestId('scope-off')).toHaveTextContent('Always allow in this workspace: unavailable, no rule can describe exactly this request.');
    plain.unmount();
    setup({ ...shellRequest, grantPreview: 'shell: git status --short in tour' });
    expect(screen.getByRole('button', { name: 'Always allow in this workspace' })).toBeEnabled();
    expect(screen.queryByTestId('scope-off')).toBeNull();
  });

  it('says what each decision does before the click, following the focused button', async () => {
    setup({ ...shellRequest, grantPreview: 'shell: git status --short in tour', rule_location: { site: 'data', path: 'policy/ws_1.toml' } });
    const effect = screen.getByTestId('approval-effect');
    expect(effect).toHaveTextContent(/^Approve once: this call runs now\. Nothing is remembered/);
    await fireEvent.focus(screen.getByRole('button', { name: 'Approve for this run' }));
    expect(effect).toHaveTextContent(/^Approve for this run: .* until this run ends\. Nothing is saved\./);
    await fireEvent.focus(screen.getByRole('button', { name: 'Always allow in this workspace' }));
    expect(effect).toHaveTextContent(
      'Always allow: adds the rule “shell: git status --short in tour” to the AgentHub data directory (policy/ws_1.toml), outside your repository. It applies to every future run in this workspace until you remove it in Settings.',
    );
    await fireEvent.focus(screen.getByRole('button', { name: /^Reject and stop/ }));
    expect(effect).toHaveTextContent('Reject and stop: nothing runs and the run ends.');
  });

  it("shows the rule in the reader's language when the request carries it as a message key", async () => {
    setup({
      ...shellRequest,
      grantPreview: 'shell: git status --short in .',
      titleMessage: { key: 'title_run', args: { command: 'git status --short' } },
      rule_preview: { key: 'rule_shell_exact', args: { command: 'git status --short', cwd: '.', tool: 'run_shell' } },
      rule_location: { site: 'data', path: 'policy/ws_1.toml' },
    });
    await setLocale('zh-CN');
    await settle();
    expect(screen.getByRole('heading', { level: 2 })).toHaveTextContent(m.title_run({ command: 'git status --short' }, { locale: 'zh-CN' }));
    await fireEvent.focus(screen.getByRole('button', { name: '在此工作区中始终允许' }));
    expect(screen.getByTestId('approval-effect')).toHaveTextContent(
      m.rule_shell_exact({ command: 'git status --short', cwd: '.', tool: 'run_shell' }, { locale: 'zh-CN' }),
    );
    await setLocale('en');
  });

  it('a workspace rule asks for confirmation and says where it is written', async () => {
    const { decisions } = setup({
      ...shellRequest,
      grantPreview: 'shell: git status --short in tour',
      rule_location: { site: 'repository', path: '.agenthub/policy.toml' },
    });
    await fireEvent.click(screen.getByRole('button', { name: 'Always allow in this workspace' }));
    await settle();
    expect(decisions).toEqual([]);
    expect(screen.getByTestId('rule-confirm-body')).toHaveTextContent(
      '“shell: git status --short in tour” will be written to the repository file .agenthub/policy.toml (git will show it).',
    );
    expect(screen.getByRole('button', { name: 'Add the rule and approve' })).toHaveFocus();
    // Cancel (or Esc) decides nothing and closes only the confirmation.
    await fireEvent.click(screen.getByRole('button', { name: 'Cancel' }));
    await settle();
    expect(screen.queryByTestId('rule-confirm')).toBeNull();
    expect(decisions).toEqual([]);
    await fireEvent.click(screen.getByRole('button', { name: 'Always allow in this workspace' }));
    await settle();
    await fireEvent.click(screen.getByRole('button', { name: 'Add the rule and approve' }));
    await settle();
    expect(decisions.map((d) => d.decision)).toEqual(['always_allow_workspace']);
  });

  it('a partial selection approves once only: wider scopes are disabled with the reason', async () => {
    setup({ ...patchRequest, grantPreview: 'patch: NOTES.md in tour' });
    const run = screen.getByRole('button', { name: 'Approve for this run' });
    const always = screen.getByRole('button', { name: 'Always allow in this workspace' });
    expect(run).toBeEnabled();
    expect(always).toBeEnabled();
    await fireEvent.click(screen.getByLabelText('Include change 2 of NOTES.md'));
    expect(screen.getByRole('button', { name: /^Approve selected \(1 of 2\)/ })).toBeEnabled();
    expect(run).toBeDisabled();
    expect(always).toBeDisabled();
    expect(screen.getAllByTestId('scope-off')).toHaveLength(1);
    expect(screen.getByTestId('scope-off')).toHaveTextContent(
      'Always allow in this workspace / Approve for this run: unavailable, part of the change is left out, and a partial approval applies once only.',
    );
    expect(run).toHaveAccessibleDescription(/a partial approval applies once only/);
  });

  it('J/K move between hunks, Space toggles the focused one, L chooses its lines', async () => {
    const { decisions } = setup(patchRequest);
    const hunks = screen.getAllByTestId('diff-hunk');
    await fireEvent.keyDown(document.activeElement!, { key: 'j' });
    expect(hunks[0]).toHaveFocus();
    await fireEvent.keyDown(hunks[0]!, { key: 'j' });
    expect(hunks[1]).toHaveFocus();
    await fireEvent.keyDown(hunks[1]!, { key: 'k' });
    expect(hunks[0]).toHaveFocus();
    // Space leaves the first hunk out, and includes it again.
    await fireEvent.keyDown(hunks[0]!, { key: ' ' });
    expect(screen.getByLabelText('Include change 1 of NOTES.md')).not.toBeChecked();
    expect(screen.getByRole('button', { name: /^Approve selected \(1 of 2\)/ })).toBeInTheDocument();
    await fireEvent.keyDown(hunks[0]!, { key: ' ' });
    expect(screen.getByLabelText('Include change 1 of NOTES.md')).toBeChecked();
    // L: the first hunk line by line; leave its removal of "old line" out.
    await fireEvent.keyDown(hunks[0]!, { key: 'l' });
    expect(within(hunks[0]!).getByRole('button', { name: 'Whole change' })).toHaveAttribute('aria-pressed', 'true');
    const boxes = within(hunks[0]!).getAllByTestId('diff-line-select');
    expect(boxes.map((b) => b.getAttribute('aria-label'))).toEqual([
      'Include the removal of line 2 of NOTES.md',
      'Include added line 2 of NOTES.md',
    ]);
    await fireEvent.click(boxes[0]!);
    expect(boxes[0]!.closest('tr')).toHaveClass('left-out');
    expect(screen.getByTestId('approval-effect')).toHaveTextContent(/^Only the selected lines \(2\) will be applied; the agent is told each line left out\./);
    await fireEvent.click(screen.getByRole('button', { name: /^Approve selected \(2 of 3\)/ }));
    await settle();
    expect(decisions.map((d) => d.hunks)).toEqual([
      [
        { path: 'NOTES.md', index: 0, lines: [2] },
        { path: 'NOTES.md', index: 1 },
      ],
    ]);
  });

  it('shows each identical policy trace step once', () => {
    const step = { rule: 'default:shell', pattern: '', matched: true, verdict: 'ask' as const };
    setup({ ...shellRequest, policyTrace: [step, step, { ...step }] });
    expect(within(screen.getByTestId('policy-trace')).getAllByText('default:shell')).toHaveLength(1);
  });

  it('lists only the keys that work', () => {
    const shell = setup(shellRequest);
    expect(screen.getByTestId('approval-keys')).toHaveTextContent('A: approve · R: reject and tell · Esc: close without deciding');
    expect(screen.getByTestId('approval-keys')).not.toHaveTextContent(/J\/K|Space/);
    shell.unmount();
    // A binary file has no hunks to move between or choose.
    const binary = setup({
      ...patchRequest,
      preview: {
        path: 'logo.png',
        operation: 'modify',
        diff: {
          status: 'modified',
          old: { path: 'logo.png', exists: true, size: 10, lines: 0 },
          new: { path: 'logo.png', exists: true, size: 12, lines: 0 },
          hunks: [],
          stats: { added: 0, deleted: 0 },
          binary: { reason: 'NUL byte in the first 8000 bytes' },
        },
      },
    });
    expect(screen.getByTestId('diff-note')).toBeInTheDocument();
    expect(screen.getByTestId('approval-keys')).toHaveTextContent(/^A: approve · R: reject and tell · Esc: close without deciding$/);
    binary.unmount();
    setup(patchRequest);
    expect(screen.getByTestId('approval-keys')).toHaveTextContent(
      'J/K or N/P: next or previous change · Space: include or leave out the focused change · L: choose its lines · A: approve',
    );
  });

  it('truncates a long title in the middle, with the whole title on hover', () => {
    const title = 'Edit src/components/some/very/deeply/nested/directory/structure/with/a/long/path/ApprovalDialog.svelte';
    setup({ ...patchRequest, title });
    const h2 = screen.getByRole('heading', { level: 2 });
    expect(h2).toHaveAttribute('title', title);
    expect(h2).toHaveTextContent(title);
    expect(h2.querySelector('.end')).toHaveTextContent('/ApprovalDialog.svelte');
  });

  it('push needs its name typed before it can be approved', async () => {
    const { decisions, dialog } = setup(pushRequest);
    const approve = screen.getByRole('button', { name: /^Approve once/ });
    expect(approve).toBeDisabled();
    await fireEvent.keyDown(dialog, { key: 'a' });
    await fireEvent.input(screen.getByLabelText('Type push to confirm'), { target: { value: 'pus' } });
    expect(approve).toBeDisabled();
    await fireEvent.input(screen.getByLabelText('Type push to confirm'), { target: { value: 'push' } });
    expect(approve).toBeEnabled();
    await fireEvent.click(approve);
    await settle();
    expect(decisions.map((d) => [d.decision, d.subjectHash])).toEqual([['approve_once', 'sha256:pushpush']]);
    expect(dialog).toHaveAttribute('data-tier', 'release');
  });

  it('read-only review is framed apart from write actions', () => {
    const read = setup(readRequest);
    expect(screen.getByTestId('approval-dialog')).toHaveAttribute('data-tier', 'read');
    expect(screen.getByTestId('approval-band')).toHaveTextContent('Read-only review');
    read.unmount();
    setup(patchRequest);
    expect(screen.getByTestId('approval-dialog')).toHaveAttribute('data-tier', 'write');
    expect(screen.getByTestId('approval-band')).toHaveTextContent('Write action');
  });

  it('keeps Tab inside the dialog', async () => {
    const { dialog } = setup(shellRequest);
    const buttons = within(dialog).getAllByRole('button');
    const last = buttons.at(-1)!;
    last.focus();
    await fireEvent.keyDown(window, { key: 'Tab' });
    expect(screen.getByRole('button', { name: 'Close without deciding' })).toHaveFocus();
    await fireEvent.keyDown(window, { key: 'Tab', shiftKey: true });
    expect(last).toHaveFocus();
  });

  it('shows why a decision failed, with the next step', async () => {
    setup(shellRequest, new ApiError({ code: 'approval_stale', message: 'the file changed since the preview' }));
    await fireEvent.click(screen.getByRole('button', { name: /^Approve once/ }));
    const notice = await screen.findByTestId('error-notice');
    expect(notice).toHaveTextContent('the file changed since the preview');
    expect(notice).toHaveTextContent('Reload the approval and decide on what is shown now.');
  });
});
