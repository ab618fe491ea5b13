import { describe, expect, it } from 'vitest';
import { fileFromModel, parseUnified, segments, withSpans, type FileDiffModel } from './unified';

const MODIFY = `diff --git a/AGENTHUB_TOUR.md b/AGENTHUB_TOUR.md
--- a/AGENTHUB_TOUR.md
+++ b/AGENTHUB_TOUR.md
@@ -5,4 +5,5 @@
 
 ## What is here
+AGENTHUB_TOUR.md
 README.md
-src
+src/
@@ -20 +21 @@
--- old dashes
+++ new pluses
\\ No newline at end of file
`;

describe('parseUnified', () => {
  it('reads files, hunks and numbered lines', () => {
    const [f, ...rest] = parseUnified(MODIFY);
    expect(rest).toEqual([]);
    expect(f).toMatchObject({ oldPath: 'AGENTHUB_TOUR.md', newPath: 'AGENTHUB_TOUR.md', path: 'AGENTHUB_TOUR.md', added: 3, deleted: 2 });
    expect(f!.hunks).toHaveLength(2);
    expect(f!.hunks[0]!.lines.map((l) => [l.op, l.old, l.new, l.text])).toEqual([
      ['context', 5, 5, ''],
      ['context', 6, 6, '## What is here'],
      ['add', 0, 7, 'AGENTHUB_TOUR.md'],
      ['context', 7, 8, 'README.md'],
      ['delete', 8, 0, 'src'],
      ['add', 0, 9, 'src/'],
    ]);
  });

  it('uses the hunk counts, so "--- x" inside a hunk is a deleted line', () => {
    const h = parseUnified(MODIFY)[0]!.hunks[1]!;
    expect(h.lines.map((l) => [l.op, l.text])).toEqual([
      ['delete', '-- old dashes'],
      ['add', '++ new pluses'],
    ]);
    expect(h.lines[1]!.noEol).toBe(true);
  });

  it('reads a new file against /dev/null, and several files', () => {
    const text = `--- /dev/null\n+++ b/a.txt\n@@ -0,0 +1,2 @@\n+one\n+two\n--- a/b.txt\n+++ /dev/null\n@@ -1 +0,0 @@\n-gone\n`;
    const files = parseUnified(text);
    expect(files.map((f) => [f.path, f.added, f.deleted])).toEqual([
      ['a.txt', 2, 0],
      ['b.txt', 0, 1],
    ]);
  });

  it('marks binary files', () => {
    const [f] = parseUnified('diff --git a/x.png b/x.png\nBinary files a/x.png and b/x.png differ\n');
    expect(f).toMatchObject({ path: 'x.png', binary: true, hunks: [] });
  });
});

describe('the diffview model', () => {
  const model: FileDiffModel = {
    status: 'modified',
    old: { path: 'a.go', exists: true, size: 10, lines: 1 },
    new: { path: 'a.go', exists: true, size: 11, lines: 1 },
    hunks: [
      {
        oldStart: 1,
        oldLines: 1,
        newStart: 1,
        newLines: 1,
        lines: [
          { op: 'delete', old: 1, text: 'x := 1', eol: 'lf', spans: [{ start: 5, end: 6 }] },
          { op: 'add', new: 1, text: 'x := 22', eol: 'none', spans: [{ start: 5, end: 7 }] },
        ],
      },
    ],
    stats: { added: 1, deleted: 1 },
  };

  it('adds intra-line spans to matching parsed lines', () => {
    const f = withSpans(parseUnified('--- a/a.go\n+++ b/a.go\n@@ -1 +1 @@\n-x := 1\n+x := 22\n')[0]!, model);
    expect(f.hunks[0]!.lines.map((l) => l.spans)).toEqual([[{ start: 5, end: 6 }], [{ start: 5, end: 7 }]]);
    expect(segments('x := 22', f.hunks[0]!.lines[1]!.spans)).toEqual([
      { text: 'x := ', changed: false },
      { text: '22', changed: true },
    ]);
  });

  it('builds a file from the model alone', () => {
    const f = fileFromModel(model);
    expect(f).toMatchObject({ path: 'a.go', added: 1, deleted: 1 });
    expect(f.hunks[0]!.header).toBe('@@ -1,1 +1,1 @@');
    expect(f.hunks[0]!.lines[1]).toMatchObject({ op: 'add', new: 1, noEol: true });
  });
});

describe('model markers', () => {
  const base = {
    old: { path: 'big.bin', exists: true, size: 10, lines: 40 },
    new: { path: 'big.bin', exists: true, size: 11, lines: 41 },
    hunks: null,
    stats: { added: 0, deleted: 0 },
  };

  it('keeps the binary reason, the omitted reason and the old line count', () => {
    const bin = fileFromModel({ ...base, status: 'modified', binary: { reason: 'NUL byte in the first 8000 bytes' } });
    expect(bin).toMatchObject({ binary: true, binaryReason: 'NUL byte in the first 8000 bytes', oldTotal: 40 });
    const om = fileFromModel({ ...base, status: 'modified', omitted: { reason: 'too_many_lines', detail: '400000 lines, limit 300000' } });
    expect(om.omitted).toEqual({ reason: 'too_many_lines', detail: '400000 lines, limit 300000' });
    const parsed = withSpans(parseUnified('diff --git a/big.bin b/big.bin\nBinary files a/big.bin and b/big.bin differ\n')[0]!, {
      ...base,
      status: 'modified',
      binary: { reason: 'NUL byte in the first 8000 bytes' },
    });
    expect(parsed.binaryReason).toBe('NUL byte in the first 8000 bytes');
  });
});
