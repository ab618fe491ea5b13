// The diff viewer's flat row model: every file of a change as one list of
// rows (file header, markers, hunk headers, lines or side-by-side pairs,
// folded context, unchanged gaps between hunks), so a virtual list can
// render any window of it. Plain functions over the parsed files; the Svelte
// components only render rows.
import type { DiffFile, DiffHunk, DiffLine, LineOp } from './unified';

export type ViewMode = 'unified' | 'split';

/** One file as the viewer shows it. */
export interface DiffEntry {
  file: DiffFile;
  /** A label for the header (e.g. "New file"). */
  status?: string;
  /** Per-hunk checkboxes are offered for this file. */
  selectable?: boolean;
}

/** One side of a side-by-side row. `index` is the line's index in its hunk. */
export interface Cell {
  op: LineOp;
  line: number;
  text: string;
  spans?: DiffLine['spans'];
  noEol?: boolean;
  index: number;
}

interface Base {
  /** Stable across rebuilds with the same files: the virtual list's key. */
  key: string;
  file: number;
}

export type Row =
  | (Base & { kind: 'file' })
  | (Base & { kind: 'note'; note: 'binary' | 'omitted' | 'empty' })
  | (Base & { kind: 'hunk'; hunk: number })
  /** Unchanged lines of the file that are not part of the diff. */
  | (Base & { kind: 'gap'; hunk: number; lines: number; where: 'before' | 'between' | 'after' })
  /** Unchanged lines inside a hunk, folded away; `id` expands them. */
  | (Base & { kind: 'fold'; hunk: number; id: string; lines: number })
  | (Base & { kind: 'line'; hunk: number; index: number; line: DiffLine })
  | (Base & { kind: 'pair'; hunk: number; left: Cell | null; right: Cell | null });

export interface RowOptions {
  mode: ViewMode;
  /** Fold ids the reader opened. */
  expanded?: ReadonlySet<string>;
  /** Files (by index) the reader collapsed to their header. */
  collapsed?: ReadonlySet<number>;
  /** Context lines kept next to a change when a run is folded. */
  keep?: number;
  /** A run is folded only when it would hide at least this many lines. */
  minFold?: number;
}

export const KEEP = 3;
export const MIN_FOLD = 4;

function cell(l: DiffLine, index: number, side: 'old' | 'new'): Cell {
  return { op: l.op, line: side === 'old' ? l.old : l.new, text: l.text, spans: l.spans, noEol: l.noEol, index };
}

/**
 * Pairs a hunk's lines for the side-by-side view, as diffview.SideBySide
 * does: context faces itself; in a change block the i-th deleted line sits
 * beside the i-th added line and the longer side's extra lines face nothing.
 */
export function pairLines(lines: readonly DiffLine[]): { left: Cell | null; right: Cell | null }[] {
  const out: { left: Cell | null; right: Cell | null }[] = [];
  for (let i = 0; i < lines.length; ) {
    const l = lines[i]!;
    if (l.op === 'context') {
      out.push({ left: cell(l, i, 'old'), right: cell(l, i, 'new') });
      i++;
      continue;
    }
    const d0 = i;
    while (i < lines.length && lines[i]!.op === 'delete') i++;
    const a0 = i;
    while (i < lines.length && lines[i]!.op === 'add') i++;
    const dels = a0 - d0;
    const adds = i - a0;
    for (let k = 0; k < Math.max(dels, adds); k++) {
      out.push({
        left: k < dels ? cell(lines[d0 + k]!, d0 + k, 'old') : null,
        right: k < adds ? cell(lines[a0 + k]!, a0 + k, 'new') : null,
      });
    }
  }
  return out;
}

/**
 * Which units of a hunk to show: runs of context longer than keep on each
 * side of a change (and at least minFold hidden) become one fold, unless
 * expanded. Returns indexes to show and folds, in order.
 */
export function foldRuns(
  isContext: readonly boolean[],
  o: { keep: number; minFold: number; expanded: ReadonlySet<string>; id: (start: number) => string },
): ({ show: number } | { fold: string; start: number; lines: number })[] {
  const out: ({ show: number } | { fold: string; start: number; lines: number })[] = [];
  const n = isContext.length;
  const hasChange = isContext.some((c) => !c);
  for (let i = 0; i < n; ) {
    if (!isContext[i]) {
      out.push({ show: i++ });
      continue;
    }
    const a = i;
    while (i < n && isContext[i]) i++;
    const b = i;
    // Keep lines next to a change only on the sides that have one.
    const head = a > 0 || !hasChange ? o.keep : 0;
    const tail = b < n || !hasChange ? o.keep : 0;
    const hidden = b - a - head - tail;
    const id = o.id(a);
    if (hidden < o.minFold || o.expanded.has(id)) {
      for (let k = a; k < b; k++) out.push({ show: k });
      continue;
    }
    for (let k = a; k < a + head; k++) out.push({ show: k });
    out.push({ fold: id, start: a + head, lines: hidden });
    for (let k = b - tail; k < b; k++) out.push({ show: k });
  }
  return out;
}

/** First and last old-file line a hunk covers (a count of 0 covers none). */
function oldSpan(h: DiffHunk): { first: number; last: number } {
  return h.oldLines === 0 ? { first: h.oldStart + 1, last: h.oldStart } : { first: h.oldStart, last: h.oldStart + h.oldLines - 1 };
}

/** Unchanged lines between hunk h-1 and hunk h (before the first one for h = 0). */
export function gapBefore(hunks: readonly DiffHunk[], h: number): number {
  const cur = oldSpan(hunks[h]!);
  const prevLast = h === 0 ? 0 : oldSpan(hunks[h - 1]!).last;
  return Math.max(0, cur.first - prevLast - 1);
}

/** Builds the rows of every file for one view mode. */
export function buildRows(entries: readonly DiffEntry[], o: RowOptions): Row[] {
  const keep = o.keep ?? KEEP;
  const minFold = o.minFold ?? MIN_FOLD;
  const expanded = o.expanded ?? new Set<string>();
  const rows: Row[] = [];
  entries.forEach((e, file) => {
    const f = e.file;
    rows.push({ kind: 'file', key: `f${file}`, file });
    if (o.collapsed?.has(file)) return;
    const note = f.binary ? 'binary' : f.omitted ? 'omitted' : f.hunks.length === 0 ? 'empty' : null;
    if (note) {
      rows.push({ kind: 'note', key: `f${file}n`, file, note });
      return;
    }
    f.hunks.forEach((h, hunk) => {
      const gap = gapBefore(f.hunks, hunk);
      if (gap > 0) rows.push({ kind: 'gap', key: `f${file}h${hunk}g`, file, hunk, lines: gap, where: hunk === 0 ? 'before' : 'between' });
      rows.push({ kind: 'hunk', key: `f${file}h${hunk}`, file, hunk });
      const id = (start: number) => `${file}:${hunk}:${start}`;
      if (o.mode === 'unified') {
        const plan = foldRuns(
          h.lines.map((l) => l.op === 'context'),
          { keep, minFold, expanded, id },
        );
        for (const p of plan) {
          if ('show' in p) rows.push({ kind: 'line', key: `f${file}h${hunk}l${p.show}`, file, hunk, index: p.show, line: h.lines[p.show]! });
          else rows.push({ kind: 'fold', key: `f${file}h${hunk}z${p.start}`, file, hunk, id: p.fold, lines: p.lines });
        }
        return;
      }
      const pairs = pairLines(h.lines);
      const plan = foldRuns(
        pairs.map((p) => p.left?.op === 'context'),
        { keep, minFold, expanded, id },
      );
      for (const p of plan) {
        if ('show' in p) {
          const pr = pairs[p.show]!;
          rows.push({ kind: 'pair', key: `f${file}h${hunk}p${p.show}`, file, hunk, left: pr.left, right: pr.right });
        } else rows.push({ kind: 'fold', key: `f${file}h${hunk}z${p.start}`, file, hunk, id: p.fold, lines: p.lines });
      }
    });
    const last = f.hunks.at(-1);
    if (last && f.oldTotal !== undefined) {
      const tail = f.oldTotal - oldSpan(last).last;
      if (tail > 0) rows.push({ kind: 'gap', key: `f${file}t`, file, hunk: f.hunks.length - 1, lines: tail, where: 'after' });
    }
  });
  return rows;
}

// --- Grouping a window of rows for rendering --------------------------------

export interface Placed {
  row: Row;
  /** The row's index in the full list (the virtual list's data-index). */
  index: number;
}

/** A hunk's rows inside one window: its header (if in the window) and its body rows. */
export interface HunkGroup {
  kind: 'hunk';
  key: string;
  hunk: number;
  head: Placed | null;
  body: Placed[];
}

export interface FileGroup {
  file: number;
  parts: (Placed | HunkGroup)[];
}

/**
 * Groups the rows at indexes (ascending) by file and hunk, so each rendered
 * hunk is one element (focusable, with its own table) even when only part of
 * it is in the window.
 */
export function groupRows(rows: readonly Row[], indexes: readonly number[]): FileGroup[] {
  const out: FileGroup[] = [];
  for (const index of indexes) {
    const row = rows[index];
    if (!row) continue;
    let g = out.at(-1);
    if (!g || g.file !== row.file) {
      g = { file: row.file, parts: [] };
      out.push(g);
    }
    const placed = { row, index };
    if (row.kind === 'hunk' || row.kind === 'line' || row.kind === 'pair' || row.kind === 'fold') {
      let last = g.parts.at(-1);
      if (!last || !('kind' in last) || last.kind !== 'hunk' || last.hunk !== row.hunk) {
        last = { kind: 'hunk', key: `f${row.file}h${row.hunk}`, hunk: row.hunk, head: null, body: [] };
        g.parts.push(last);
      }
      if (row.kind === 'hunk') last.head = placed;
      else last.body.push(placed);
      continue;
    }
    g.parts.push(placed);
  }
  return out;
}

/** Index of the first row of each file, and of each hunk header, for navigation. */
export function landmarks(rows: readonly Row[]): { files: number[]; hunks: number[] } {
  const files: number[] = [];
  const hunks: number[] = [];
  rows.forEach((r, i) => {
    if (r.kind === 'file') files[r.file] = i;
    else if (r.kind === 'hunk') hunks.push(i);
  });
  return { files, hunks };
}

/** The file with only the hunks at `keep` (e.g. those a reviewer approved), counts redone. */
export function onlyHunks(file: DiffFile, keep: readonly number[]): DiffFile {
  const set = new Set(keep);
  const hunks = file.hunks.filter((_, i) => set.has(i));
  let added = 0;
  let deleted = 0;
  for (const h of hunks)
    for (const l of h.lines) {
      if (l.op === 'add') added++;
      else if (l.op === 'delete') deleted++;
    }
  return { ...file, hunks, added, deleted };
}
