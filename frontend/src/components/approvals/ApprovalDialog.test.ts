import { fireEvent, render, screen, within } from '@testing-library/svelte';
import { describe, expect, it } from 'vitest';
import { ApiError, type ApprovalRequest, type Decision } from '../../lib/api';
import { patchRequest, pushRequest, readRequest, shellRequest } from '../../lib/testdata/approvals';
import ApprovalDialog from './ApprovalDialog.svelte';

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
  it('is a labelled modal that takes focus itself, not an approve button', () => {
    const { dialog } = setup(shellRequest);
    expect(dialog).toHaveAttribute('aria-modal', 'true');
    expect(dialog).toHaveAccessibleName('Run: git status --short');
    expect(dialog).toHaveFocus();
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
    expect(screen.getByText('Only the selected changes (1) will be approved.')).toBeInTheDocument();
    await fireEvent.click(screen.getByRole('button', { name: /^Approve once/ }));
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
    expect(screen.getByRole('button', { name: /^Approve once/ })).toBeDisabled();
    expect(screen.getByRole('button', { name: /^Approve for this run/ })).toBeDisabled();
    await fireEvent.keyDown(dialog, { key: 'a' });
    await settle();
    expect(decisions).toEqual([]);
    await fireEvent.click(screen.getByRole('button', { name: /^Reject and stop/ }));
    await settle();
    expect(decisions.map((d) => d.decision)).toEqual(['reject_and_stop']);
  });

  it('offers always-allow only with the rule it adds', () => {
    const plain = setup(shellRequest);
    expect(screen.queryByRole('button', { name: 'Always allow in this workspace' })).toBeNull();
    plain.unmount();
    setup({ ...shellRequest, grantPreview: 'shell: git status --short in tour' });
    expect(screen.getByRole('button', { name: 'Always allow in this workspace' })).toBeEnabled();
    expect(screen.getByTestId('approval-grant')).toHaveTextContent('Adds the rule: shell: git status --short in tour');
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
