import { fireEvent, render, screen, within } from '@testing-library/svelte';
import { beforeEach, describe, expect, it } from 'vitest';
import DiffView from './DiffView.svelte';
import { parseUnified, type DiffFile } from '../../../lib/diff/unified';
import type { DiffEntry } from '../../../lib/diff/rows';

const file = (text: string): DiffFile => parseUnified(text)[0]!;
const TWO_HUNKS = `--- a/src/app.ts\n+++ b/src/app.ts\n@@ -1,3 +1,3 @@\n const a = 1;\n-let b = 2;\n+let b = 3;\n const c = 4;\n@@ -20,2 +20,3 @@\n x();\n+y();\n z();\n`;

describe('DiffView', () => {
  // The layout choice is remembered on the device; each test starts unified.
  beforeEach(() => localStorage.clear());

  it('shows the unified view, and the same change side by side', async () => {
    render(DiffView, { files: [{ file: file(TWO_HUNKS) }] });
    const view = screen.getByTestId('diff-view');
    expect(view.dataset.mode).toBe('unified');
    expect([...view.querySelectorAll('tr')].map((r) => r.dataset.op)).toEqual(['context', 'delete', 'add', 'context', 'context', 'add', 'context']);
    expect(screen.getAllByTestId('diff-gap').map((g) => g.textContent)).toEqual(['⋯ 16 unchanged lines not in this diff']);

    await fireEvent.click(within(screen.getByTestId('diff-mode-split')).getByRole('radio'));
    expect(view.dataset.mode).toBe('split');
    const pairs = [...view.querySelectorAll('tr.pair')];
    expect(pairs.map((r) => [r.getAttribute('data-left'), r.getAttribute('data-right')])).toEqual([
      ['context', 'context'],
      ['delete', 'add'],
      ['context', 'context'],
      ['context', 'context'],
      ['empty', 'add'],
      ['context', 'context'],
    ]);
    expect(pairs[1]!.textContent!.replace(/\s+/g, "")).toBe("2−letb=2;2+letb=3;");
    expect(localStorage.getItem('agenthub.diff.mode')).toBe('split');
  });

  it('folds a long unchanged run and opens it on request', async () => {
    const body = Array.from({ length: 30 }, (_, i) => ` line ${i}`).join('\n');
    render(DiffView, { files: [{ file: file(`--- a/x.txt\n+++ b/x.txt\n@@ -1,32 +1,32 @@\n-a\n+A\n${body}\n-b\n+B\n`) }] });
    const unfold = screen.getByTestId('diff-unfold');
    expect(unfold).toHaveTextContent('Show 24 unchanged lines');
    expect(screen.getByTestId('diff-view').querySelectorAll('tr[data-op]')).toHaveLength(4 + 6);
    await fireEvent.click(unfold);
    expect(screen.queryByTestId('diff-unfold')).toBeNull();
    expect(screen.getByTestId('diff-view').querySelectorAll('tr[data-op]')).toHaveLength(4 + 30);
  });

  it('lists several files in a tree with their counts and explains binary and omitted files', async () => {
    const entries: DiffEntry[] = [
      { file: file(TWO_HUNKS), status: 'Modified file' },
      { file: { ...file(TWO_HUNKS), path: 'assets/logo.png', binary: true, binaryReason: 'NUL byte in the first 8000 bytes', hunks: [], added: 0, deleted: 0 } },
      { file: { ...file(TWO_HUNKS), path: 'data/big.csv', omitted: { reason: 'too_many_lines', detail: '400000 lines, limit 300000' }, hunks: [] } },
    ];
    render(DiffView, { files: entries });
    const tree = screen.getByTestId('diff-tree');
    const entriesInTree = within(tree).getAllByTestId('diff-tree-file');
    expect(entriesInTree.map((b) => b.getAttribute('aria-label'))).toEqual([
      'assets/logo.png: 0 lines added, 0 removed',
      'data/big.csv: 2 lines added, 1 removed',
      'src/app.ts: 2 lines added, 1 removed',
    ]);
    expect(within(tree).getByText('src/')).toBeInTheDocument();
    const notes = screen.getAllByTestId('diff-note');
    expect(notes.map((n) => n.textContent)).toEqual([
      'Binary file (it contains a NUL byte): contents not shown.',
      'Diff not shown: the file has too many lines (400000 lines, limit 300000).',
    ]);
    await fireEvent.click(entriesInTree[1]!);
    expect(entriesInTree[1]).toHaveAttribute('aria-current', 'true');
  });

  it('moves between hunks with N/J and P/K and says where it is', async () => {
    render(DiffView, { files: [{ file: file(TWO_HUNKS) }] });
    const hunks = screen.getAllByTestId('diff-hunk');
    const scroll = screen.getByTestId('diff-scroll');
    await fireEvent.keyDown(scroll, { key: 'j' });
    expect(hunks[0]).toHaveFocus();
    await fireEvent.keyDown(hunks[0]!, { key: 'n' });
    expect(hunks[1]).toHaveFocus();
    expect(screen.getByTestId('diff-position')).toHaveTextContent('Change 2 of 2');
    await fireEvent.keyDown(hunks[1]!, { key: 'k' });
    expect(hunks[0]).toHaveFocus();
    expect(screen.getByTestId('diff-position')).toHaveTextContent('Change 1 of 2');
    await fireEvent.click(screen.getByRole('button', { name: 'Next change (N or J)' }));
    expect(hunks[1]).toHaveFocus();
  });

  it('reports the hunks and files the reviewer unticks', async () => {
    const calls: unknown[] = [];
    render(DiffView, {
      files: [{ file: file(TWO_HUNKS), selectable: true }],
      selection: { 'src/app.ts': [true, false] },
      onSelect: (...a: unknown[]) => calls.push(a),
    });
    const boxes = screen.getAllByTestId('diff-hunk-select') as HTMLInputElement[];
    expect(boxes.map((b) => b.checked)).toEqual([true, false]);
    expect((screen.getByTestId('diff-file-select') as HTMLInputElement).indeterminate).toBe(true);
    expect(screen.getAllByTestId('diff-hunk')[1]).toHaveClass('excluded');
    await fireEvent.click(boxes[0]!);
    await fireEvent.click(screen.getByTestId('diff-file-select'));
    expect(calls).toEqual([
      ['src/app.ts', 0, false],
      ['src/app.ts', 'all', true],
    ]);
  });

  it('offers one checkbox per added or removed line of a hunk chosen line by line, unified and side by side', async () => {
    const calls: unknown[] = [];
    render(DiffView, {
      files: [{ file: file(TWO_HUNKS), selectable: true }],
      selection: { 'src/app.ts': [true, true] },
      picks: { 'src/app.ts': { 0: [2] } },
      onSelect: () => {},
      onLineMode: (...a: unknown[]) => calls.push(['mode', ...a]),
      onPickLine: (...a: unknown[]) => calls.push(['line', ...a]),
    });
    // A long path keeps its file name in view; the whole path is on hover.
    expect(screen.getByTestId('diff-file').querySelector('.path [title]')).toHaveAttribute('title', 'src/app.ts');
    const [first, second] = screen.getAllByTestId('diff-hunk');
    // Only the hunk in line mode has line boxes; context lines never do.
    expect(within(second!).queryAllByTestId('diff-line-select')).toEqual([]);
    const boxes = within(first!).getAllByTestId('diff-line-select') as HTMLInputElement[];
    expect(boxes.map((b) => [b.dataset.line, b.checked])).toEqual([
      ['1', false],
      ['2', true],
    ]);
    expect(boxes[0]!.closest('tr')).toHaveClass('left-out');
    await fireEvent.click(boxes[0]!);
    await fireEvent.click(within(second!).getByRole('button', { name: 'Choose lines' }));
    await fireEvent.click(within(first!).getByRole('button', { name: 'Whole change' }));
    expect(calls).toEqual([
      ['line', 'src/app.ts', 0, 1, true],
      ['mode', 'src/app.ts', 1, true],
      ['mode', 'src/app.ts', 0, false],
    ]);
    await fireEvent.click(within(screen.getByTestId('diff-mode-split')).getByRole('radio'));
    const split = within(screen.getAllByTestId('diff-hunk')[0]!).getAllByTestId('diff-line-select');
    expect(split.map((b) => b.getAttribute('aria-label'))).toEqual(['Include the removal of line 2 of src/app.ts', 'Include added line 2 of src/app.ts']);
  });

  it('renders only a window of a 10,000-line diff', async () => {
    const lines = Array.from({ length: 10_000 }, (_, i) => `+row ${i}`).join('\n');
    render(DiffView, { files: [{ file: file(`--- /dev/null\n+++ b/big.txt\n@@ -0,0 +1,10000 @@\n${lines}\n`) }] });
    await new Promise((r) => setTimeout(r, 0));
    const rendered = screen.getByTestId('diff-view').querySelectorAll('tr');
    expect(rendered.length).toBeGreaterThan(10);
    expect(rendered.length).toBeLessThan(120);
    expect(screen.getByTestId('diff-scroll')).toHaveAttribute('role', 'region');
  });
});
