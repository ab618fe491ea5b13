import { describe, expect, it } from 'vitest';
import { buildRows, foldRuns, gapBefore, groupRows, landmarks, onlyHunks, pairLines, type DiffEntry, type Row } from './rows';
import { parseUnified, type DiffLine } from './unified';

const L = (op: DiffLine['op'], text: string, old = 0, nw = 0): DiffLine => ({ op, text, old, new: nw });

describe('pairLines (side by side)', () => {
  it('puts the i-th deleted line beside the i-th added one, extra lines face nothing', () => {
    const pairs = pairLines([
      L('context', 'a', 1, 1),
      L('delete', 'b', 2),
      L('delete', 'c', 3),
      L('delete', 'd', 4),
      L('add', 'B', 0, 2),
      L('context', 'e', 5, 3),
      L('add', 'F', 0, 4),
      L('add', 'G', 0, 5),
    ]);
    expect(pairs.map((p) => [p.left?.text ?? null, p.right?.text ?? null])).toEqual([
      ['a', 'a'],
      ['b', 'B'],
      ['c', null],
      ['d', null],
      ['e', 'e'],
      [null, 'F'],
      [null, 'G'],
    ]);
    // Each side carries its own line number and the line's index in the hunk.
    expect(pairs[1]).toMatchObject({ left: { line: 2, index: 1, op: 'delete' }, right: { line: 2, index: 4, op: 'add' } });
    expect(pairs[4]).toMatchObject({ left: { line: 5 }, right: { line: 3 } });
  });

  it('keeps intra-line spans on both sides', () => {
    const [p] = pairLines([
      { ...L('delete', 'x = 1', 1), spans: [{ start: 4, end: 5 }] },
      { ...L('add', 'x = 22', 0, 1), spans: [{ start: 4, end: 6 }] },
    ]);
    expect(p!.left!.spans).toEqual([{ start: 4, end: 5 }]);
    expect(p!.right!.spans).toEqual([{ start: 4, end: 6 }]);
  });
});

describe('foldRuns (collapsed unchanged regions)', () => {
  const id = (s: number) => `h:${s}`;
  const shown = (plan: ReturnType<typeof foldRuns>) => plan.map((p) => ('show' in p ? p.show : `fold ${p.start}+${p.lines}`));

  it('folds a long run between changes, keeping context on both sides', () => {
    // change, 12 context, change
    const ctx = [false, ...Array(12).fill(true), false];
    expect(shown(foldRuns(ctx, { keep: 3, minFold: 4, expanded: new Set(), id }))).toEqual([0, 1, 2, 3, 'fold 4+6', 10, 11, 12, 13]);
  });

  it('keeps context only on the side that has a change at the edges of a hunk', () => {
    const ctx = [...Array(10).fill(true), false, ...Array(10).fill(true)];
    expect(shown(foldRuns(ctx, { keep: 3, minFold: 4, expanded: new Set(), id }))).toEqual([
      'fold 0+7',
      7,
      8,
      9,
      10,
      11,
      12,
      13,
      'fold 14+7',
    ]);
  });

  it('does not fold short runs, and an expanded fold shows every line', () => {
    const ctx = [false, ...Array(9).fill(true), false];
    expect(shown(foldRuns(ctx, { keep: 3, minFold: 4, expanded: new Set(), id }))).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
    const long = [false, ...Array(20).fill(true), false];
    expect(foldRuns(long, { keep: 3, minFold: 4, expanded: new Set(['h:1']), id })).toHaveLength(22);
  });
});

describe('buildRows', () => {
  const text = `--- a/a.ts\n+++ b/a.ts\n@@ -3,3 +3,3 @@\n one\n-two\n+TWO\n three\n@@ -20,2 +20,3 @@\n x\n+y\n z\n`;
  const entries = (): DiffEntry[] => [{ file: parseUnified(text)[0]! }, { file: { ...parseUnified(text)[0]!, path: 'b.bin', binary: true, binaryReason: 'NUL byte' } }];
  const kinds = (rows: Row[]) => rows.map((r) => r.kind);

  it('lays out headers, gaps between hunks, lines and markers', () => {
    const rows = buildRows(entries(), { mode: 'unified' });
    expect(kinds(rows)).toEqual(['file', 'gap', 'hunk', 'line', 'line', 'line', 'line', 'gap', 'hunk', 'line', 'line', 'line', 'file', 'note']);
    expect(rows[1]).toMatchObject({ lines: 2, where: 'before' });
    expect(rows[7]).toMatchObject({ lines: 14, where: 'between' }); // lines 6..19
    expect(rows[13]).toMatchObject({ note: 'binary' });
    // Keys are unique and stable.
    expect(new Set(rows.map((r) => r.key)).size).toBe(rows.length);
    expect(buildRows(entries(), { mode: 'unified' }).map((r) => r.key)).toEqual(rows.map((r) => r.key));
  });

  it('pairs lines in the split view and stops a collapsed file at its header', () => {
    const rows = buildRows(entries(), { mode: 'split', collapsed: new Set([0]) });
    expect(kinds(rows)).toEqual(['file', 'file', 'note']);
    const split = buildRows(entries().slice(0, 1), { mode: 'split' });
    expect(kinds(split)).toEqual(['file', 'gap', 'hunk', 'pair', 'pair', 'pair', 'gap', 'hunk', 'pair', 'pair', 'pair']);
  });

  it('shows the unchanged tail when the old file length is known', () => {
    const [f] = parseUnified(text);
    f!.oldTotal = 30;
    const rows = buildRows([{ file: f! }], { mode: 'unified' });
    expect(rows.at(-1)).toMatchObject({ kind: 'gap', where: 'after', lines: 9 }); // 22..30
  });

  it('counts gaps around empty-side hunks (pure insertions)', () => {
    const [f] = parseUnified('--- a/x\n+++ b/x\n@@ -4,0 +5,1 @@\n+new\n@@ -9,1 +10,1 @@\n-a\n+b\n');
    expect(gapBefore(f!.hunks, 0)).toBe(4); // lines 1..4 precede the insertion after line 4
    expect(gapBefore(f!.hunks, 1)).toBe(4); // lines 5..8
  });

  it('folds and expands long context in both modes', () => {
    const body = Array.from({ length: 20 }, (_, i) => ` c${i}`).join('\n');
    const [f] = parseUnified(`--- a/x\n+++ b/x\n@@ -1,22 +1,22 @@\n-a\n+A\n${body}\n-b\n+B\n`);
    for (const mode of ['unified', 'split'] as const) {
      const rows = buildRows([{ file: f! }], { mode });
      const fold = rows.find((r) => r.kind === 'fold');
      expect(fold).toMatchObject({ lines: 14 });
      const open = buildRows([{ file: f! }], { mode, expanded: new Set([fold!.kind === 'fold' ? fold!.id : '']) });
      expect(open.some((r) => r.kind === 'fold')).toBe(false);
      expect(open.length).toBe(rows.length + 13);
    }
  });
});

describe('groupRows and landmarks', () => {
  it('groups a window by file and hunk, with a hunk header only when it is in the window', () => {
    const text = `--- a/a\n+++ b/a\n@@ -1,2 +1,2 @@\n-a\n+b\n c\n--- a/b\n+++ b/b\n@@ -1 +1 @@\n-x\n+y\n`;
    const rows = buildRows(
      parseUnified(text).map((file) => ({ file })),
      { mode: 'unified' },
    );
    // rows: 0 file a, 1 hunk, 2-4 lines, 5 file b, 6 hunk, 7-8 lines
    const groups = groupRows(rows, [3, 4, 5, 6, 7]);
    expect(groups.map((g) => g.file)).toEqual([0, 1]);
    const [first] = groups[0]!.parts;
    expect(first).toMatchObject({ kind: 'hunk', hunk: 0, head: null });
    expect(first && 'body' in first && first.body.map((p) => p.index)).toEqual([3, 4]);
    expect(groups[1]!.parts.map((p) => ('kind' in p ? 'hunk' : p.row.kind))).toEqual(['file', 'hunk']);
    expect(landmarks(rows)).toEqual({ files: [0, 5], hunks: [1, 6] });
  });
});

describe('onlyHunks', () => {
  it('keeps the approved hunks and recounts', () => {
    const [f] = parseUnified(`--- a/a\n+++ b/a\n@@ -1,2 +1,2 @@\n-a\n+b\n c\n@@ -9 +9,2 @@\n x\n+y\n`);
    const kept = onlyHunks(f!, [1]);
    expect(kept.hunks.map((h) => h.oldStart)).toEqual([9]);
    expect([kept.added, kept.deleted, f!.hunks.length]).toEqual([1, 0, 2]);
  });
});
