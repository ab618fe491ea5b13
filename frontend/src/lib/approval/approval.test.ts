import { describe, expect, it } from 'vitest';
import { patchRequest, pushRequest, shellRequest } from '../testdata/approvals';
import { buildDecision, confirmWord, displayCwd, hunkRefs, initialSelection, patchFiles, ruleLocation, selectedCount, tier, uniqueTrace } from '.';

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

  it('sends the chosen lines of a hunk chosen line by line, and counts lines then', () => {
    const files = patchFiles(patchRequest.preview);
    const sel = initialSelection(files);
    // Hunk 0 line by line with every changed line kept is still the whole patch.
    expect(hunkRefs(sel, { 'NOTES.md': { 0: [1, 2] } }, files)).toBeUndefined();
    expect(selectedCount(sel, { 'NOTES.md': { 0: [2, 1] } }, files)).toEqual({ selected: 3, total: 3, unit: 'lines' });
    // Only the added line of hunk 0; hunk 1 whole: sorted indexes into the hunk's lines.
    expect(selectedCount(sel, { 'NOTES.md': { 0: [2] } }, files)).toEqual({ selected: 2, total: 3, unit: 'lines' });
    expect(buildDecision(patchRequest, 'approve_once', { selection: sel, picks: { 'NOTES.md': { 0: [2] } }, files }).hunks).toEqual([
      { path: 'NOTES.md', index: 0, lines: [2] },
      { path: 'NOTES.md', index: 1 },
    ]);
    // No line kept: the hunk is left out.
    expect(hunkRefs({ 'NOTES.md': [false, true] }, { 'NOTES.md': { 0: [] } }, files)).toEqual([{ path: 'NOTES.md', index: 1 }]);
    // A preview whose parsed lines do not match the model cannot be chosen from.
    const bad = structuredClone(patchRequest.preview) as { diff: { hunks: { lines: unknown[] }[] } };
    bad.diff.hunks[0]!.lines.pop();
    expect(patchFiles(bad)[0]!.selectable).toBe(false);
  });

  it('shows each identical trace step once and reads where a rule is written', () => {
    const a = { rule: 'default:shell', pattern: '', matched: true, verdict: 'ask' };
    expect(uniqueTrace([a, { ...a }, { ...a, matched: false }, a])).toEqual([a, { ...a, matched: false }]);
    expect(ruleLocation({ ...shellRequest, rule_location: { site: 'data', path: 'policy/w.toml' } })).toEqual({ site: 'data', path: 'policy/w.toml' });
    expect(ruleLocation(shellRequest)).toBeNull();
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
