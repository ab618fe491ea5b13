// Keyboard navigation between hunks: which hunk comes next from where the
// reader is. Plain functions over the row indexes of hunk headers.

/**
 * The hunk header to move to from `at` (a row index: the focused hunk's
 * header, or the first row in view when no hunk has focus; -1 for the top).
 * Stops at the first and the last hunk instead of wrapping.
 */
export function stepHunk(starts: readonly number[], at: number, dir: 1 | -1): number | null {
  if (starts.length === 0) return null;
  if (dir > 0) {
    for (const s of starts) if (s > at) return s;
    return starts.at(-1)!;
  }
  for (let i = starts.length - 1; i >= 0; i--) if (starts[i]! < at) return starts[i]!;
  return starts[0]!;
}

/** The hunk (position in starts) that contains row index `row`, or -1 above the first. */
export function hunkAt(starts: readonly number[], row: number): number {
  let lo = 0;
  let hi = starts.length - 1;
  let found = -1;
  while (lo <= hi) {
    const mid = (lo + hi) >> 1;
    if (starts[mid]! <= row) {
      found = mid;
      lo = mid + 1;
    } else hi = mid - 1;
  }
  return found;
}

/** Keys that move between hunks: N/J forward, P/K back. */
export function hunkKey(e: Pick<KeyboardEvent, 'key' | 'ctrlKey' | 'metaKey' | 'altKey'>): 1 | -1 | null {
  if (e.ctrlKey || e.metaKey || e.altKey) return null;
  const k = e.key.toLowerCase();
  if (k === 'n' || k === 'j') return 1;
  if (k === 'p' || k === 'k') return -1;
  return null;
}

/** True when a key press belongs to a text field, not to navigation. */
export function typing(target: EventTarget | null): boolean {
  const t = target as HTMLElement | null;
  if (!t || !t.tagName) return false;
  if (t.isContentEditable || t.tagName === 'TEXTAREA' || t.tagName === 'SELECT') return true;
  if (t.tagName !== 'INPUT') return false;
  const type = (t as HTMLInputElement).type;
  return !['checkbox', 'radio', 'button', 'submit', 'reset'].includes(type);
}
