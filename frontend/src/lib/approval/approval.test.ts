import { describe, expect, it } from 'vitest';
import { patchRequest, pushRequest, shellRequest } from '../testdata/approvals';
import { buildDecision, confirmWord, displayCwd, hunkRefs, initialSelection, patchFiles, tier } from '.';

describe('approval helpers', () => {
  it('frames read-only review apart from writes, commands and releases', () => {
    expect(['read', 'patch', 'write', 'shell', 'network', 'push', 'deploy'].map(tier)).toEqual([
      'read',
      'write',
      'write',
      'shell',
      'network',
      'release',
      'release',
    ]);
    expect(['push', 'publish', 'deploy', 'shell', 'patch'].map(confirmWord)).toEqual(['push', 'publish', 'deploy', null, null]);
  });

  it('reads the files and hunks of a patch preview', () => {
    const [f, ...rest] = patchFiles(patchRequest.preview);
    expect(rest).toEqual([]);
    expect(f).toMatchObject({ operation: 'modify', selectable: true, binary: false });
    expect(f!.file.path).toBe('NOTES.md');
    expect(f!.file.hunks).toHaveLength(2);
    expect(f!.file.hunks[0]!.lines[2]!.spans).toEqual([{ start: 0, end: 3 }]);
    expect(patchFiles(null)).toEqual([]);
  });

  it('sends the whole patch when every hunk is selected, and the picked hunks otherwise', () => {
    const sel = initialSelection(patchFiles(patchRequest.preview));
    expect(sel).toEqual({ 'NOTES.md': [true, true] });
    expect(hunkRefs(sel)).toBeUndefined();
    expect(buildDecision(patchRequest, 'approve_once', { selection: sel })).toEqual({
      approvalId: 'apr_patch',
      toolCallId: 'call_s3_1',
      decision: 'approve_once',
      subjectHash: 'sha256:patchpatch',
    });
    sel['NOTES.md'] = [false, true];
    expect(buildDecision(patchRequest, 'approve_for_run', { selection: sel }).hunks).toEqual([{ path: 'NOTES.md', index: 1 }]);
    // A rejection never carries hunks.
    expect(buildDecision(patchRequest, 'reject_and_stop', { selection: sel }).hunks).toBeUndefined();
  });

  it('sends the reason with rejections and partial approvals only', () => {
    expect(buildDecision(shellRequest, 'reject_and_tell', { reason: '  use git diff  ' })).toEqual({
      approvalId: 'apr_shell',
      toolCallId: 'call_s4_1',
      decision: 'reject_and_tell',
      subjectHash: 'sha256:shellshell',
      reason: 'use git diff',
    });
    expect(buildDecision(shellRequest, 'approve_once', { reason: 'x' }).reason).toBeUndefined();
    // A partial approval tells the agent why the other hunks were left out.
    const part = initialSelection(patchFiles(patchRequest.preview));
    part['NOTES.md']![0] = false;
    expect(buildDecision(patchRequest, 'approve_once', { reason: ' keep it ', selection: part }).reason).toBe('keep it');
    expect(buildDecision(patchRequest, 'approve_once', { reason: 'x', selection: initialSelection(patchFiles(patchRequest.preview)) }).reason).toBeUndefined();
    expect(buildDecision(pushRequest, 'reject_and_stop', { reason: '' }).reason).toBeUndefined();
  });

  it('shows the working directory relative to the workspace', () => {
    expect([displayCwd('.'), displayCwd(''), displayCwd('./src'), displayCwd('web/app'), displayCwd(undefined)]).toEqual([
      '.',
      '.',
      'src',
      'web/app',
      '.',
    ]);
  });
});
