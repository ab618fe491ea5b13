import { describe, expect, it } from 'vitest';
import { fileTree } from './tree';

describe('fileTree', () => {
  it('sums +/- counts per folder, joins single-child chains, folders before files', () => {
    const nodes = fileTree([
      { path: 'src/lib/diff/rows.ts', added: 10, deleted: 2 },
      { path: 'src/lib/diff/nav.ts', added: 3, deleted: 0 },
      { path: 'README.md', added: 1, deleted: 1 },
      { path: 'src/main.ts', added: 0, deleted: 4 },
    ]);
    expect(nodes.map((n) => [n.depth, n.name, n.added, n.deleted, n.file ?? null])).toEqual([
      [0, 'src', 13, 6, null],
      [1, 'lib/diff', 13, 2, null],
      [2, 'nav.ts', 3, 0, 1],
      [2, 'rows.ts', 10, 2, 0],
      [1, 'main.ts', 0, 4, 3],
      [0, 'README.md', 1, 1, 2],
    ]);
    expect(nodes[1]!.path).toBe('src/lib/diff');
    expect(nodes[3]!.path).toBe('src/lib/diff/rows.ts');
  });

  it('handles a single top-level file', () => {
    expect(fileTree([{ path: 'a.txt', added: 2, deleted: 0 }])).toEqual([{ name: 'a.txt', path: 'a.txt', depth: 0, added: 2, deleted: 0, file: 0 }]);
  });
});
