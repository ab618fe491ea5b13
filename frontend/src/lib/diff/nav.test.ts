import { describe, expect, it } from 'vitest';
import { hunkAt, hunkKey, stepHunk, typing } from './nav';

describe('hunk navigation', () => {
  const starts = [2, 10, 30];

  it('steps forward and back, stopping at the ends', () => {
    expect(stepHunk(starts, -1, 1)).toBe(2);
    expect(stepHunk(starts, 2, 1)).toBe(10);
    expect(stepHunk(starts, 15, 1)).toBe(30);
    expect(stepHunk(starts, 30, 1)).toBe(30);
    expect(stepHunk(starts, 30, -1)).toBe(10);
    expect(stepHunk(starts, 12, -1)).toBe(10);
    expect(stepHunk(starts, 2, -1)).toBe(2);
    expect(stepHunk([], 0, 1)).toBeNull();
  });

  it('finds the hunk a row belongs to', () => {
    expect(hunkAt(starts, 0)).toBe(-1);
    expect(hunkAt(starts, 2)).toBe(0);
    expect(hunkAt(starts, 29)).toBe(1);
    expect(hunkAt(starts, 999)).toBe(2);
  });

  it('reads N/J and P/K, not with modifiers, and not while typing', () => {
    expect(['n', 'J', 'p', 'K', 'x'].map((key) => hunkKey({ key, ctrlKey: false, metaKey: false, altKey: false }))).toEqual([1, 1, -1, -1, null]);
    expect(hunkKey({ key: 'n', ctrlKey: true, metaKey: false, altKey: false })).toBeNull();
    const text = document.createElement('input');
    const box = document.createElement('input');
    box.type = 'checkbox';
    expect([typing(text), typing(box), typing(document.createElement('textarea')), typing(document.createElement('div'))]).toEqual([true, false, true, false]);
  });
});
