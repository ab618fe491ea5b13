// The file tree beside a multi-file diff: folders with the summed +/- counts
// of the files under them, single-child folder chains joined ("src/lib"),
// flattened in display order with a depth for indentation.

export interface TreeInput {
  path: string;
  added: number;
  deleted: number;
}

export interface TreeNode {
  /** The segment(s) shown: a file name, or a folder path joined with "/". */
  name: string;
  /** Full path of the folder or file. */
  path: string;
  depth: number;
  added: number;
  deleted: number;
  /** Index of the file in the input; undefined for a folder. */
  file?: number;
}

interface Dir {
  name: string;
  path: string;
  dirs: Map<string, Dir>;
  files: { name: string; index: number; added: number; deleted: number }[];
  added: number;
  deleted: number;
}

const dir = (name: string, path: string): Dir => ({ name, path, dirs: new Map(), files: [], added: 0, deleted: 0 });

/** Builds the flattened tree: folders first, then files, each sorted by name. */
export function fileTree(files: readonly TreeInput[]): TreeNode[] {
  const root = dir('', '');
  files.forEach((f, index) => {
    const parts = f.path.split('/').filter(Boolean);
    const name = parts.pop() ?? f.path;
    let d = root;
    d.added += f.added;
    d.deleted += f.deleted;
    for (const p of parts) {
      let next = d.dirs.get(p);
      if (!next) {
        next = dir(p, d.path ? `${d.path}/${p}` : p);
        d.dirs.set(p, next);
      }
      d = next;
      d.added += f.added;
      d.deleted += f.deleted;
    }
    d.files.push({ name, index, added: f.added, deleted: f.deleted });
  });
  const out: TreeNode[] = [];
  const walk = (d: Dir, depth: number) => {
    for (const sub of [...d.dirs.values()].sort((a, b) => a.name.localeCompare(b.name))) {
      // Join a chain of folders that hold nothing but one folder.
      let node = sub;
      let name = sub.name;
      while (node.files.length === 0 && node.dirs.size === 1) {
        node = [...node.dirs.values()][0]!;
        name = `${name}/${node.name}`;
      }
      out.push({ name, path: node.path, depth, added: node.added, deleted: node.deleted });
      walk(node, depth + 1);
    }
    for (const f of [...d.files].sort((a, b) => a.name.localeCompare(b.name))) {
      out.push({ name: f.name, path: d.path ? `${d.path}/${f.name}` : f.name, depth, added: f.added, deleted: f.deleted, file: f.index });
    }
  };
  walk(root, 0);
  return out;
}
