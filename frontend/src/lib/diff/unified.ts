// A small reader of unified diff text (git's format) into files, hunks and
// lines, plus the types of the Go diffview model (diffview/model.go) that
// approval previews carry. Rendering uses the text; the model, when present,
// adds intra-line spans, binary and omitted markers.

export type LineOp = 'context' | 'add' | 'delete';

export interface DiffLine {
  op: LineOp;
  text: string;
  /** 1-based line numbers; 0 where the line does not exist on that side. */
  old: number;
  new: number;
  /** Changed parts of text (UTF-16 offsets, end exclusive). */
  spans?: { start: number; end: number }[];
  /** "\ No newline at end of file" follows this line. */
  noEol?: boolean;
}

export interface DiffHunk {
  header: string;
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  lines: DiffLine[];
}

export interface DiffFile {
  oldPath: string;
  newPath: string;
  /** The path to show and to select hunks by: new path, or old when deleted. */
  path: string;
  /** Lines between "diff --git" and the first hunk (mode, index, rename). */
  meta: string[];
  binary: boolean;
  hunks: DiffHunk[];
  added: number;
  deleted: number;
  /** Why the file is shown as binary, when the diffview model says. */
  binaryReason?: string;
  /** The content diff was not computed or not kept (diffview's marker). */
  omitted?: { reason: string; detail: string };
  /** Lines of the old file, when the model says: the unchanged tail after the last hunk. */
  oldTotal?: number;
}

const HUNK = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/;

function stripPrefix(p: string): string {
  const path = p.split('\t')[0] ?? p;
  if (path === '/dev/null') return '';
  return path.replace(/^[ab]\//, '');
}

/** Parses unified diff text; unknown lines are kept as file metadata. */
export function parseUnified(text: string): DiffFile[] {
  const files: DiffFile[] = [];
  let file: DiffFile | null = null;
  let hunk: DiffHunk | null = null;
  let oldNo = 0;
  let newNo = 0;
  // Lines still expected in the current hunk: the header's counts decide
  // where it ends, so "--- x" inside a hunk is a deleted line, not a header.
  let oldLeft = 0;
  let newLeft = 0;

  const newFile = (): DiffFile => {
    const f: DiffFile = { oldPath: '', newPath: '', path: '', meta: [], binary: false, hunks: [], added: 0, deleted: 0 };
    files.push(f);
    hunk = null;
    return f;
  };

  /** Adds line to h if the hunk's remaining counts allow it. */
  const bodyLine = (h: DiffHunk, f: DiffFile, line: string): boolean => {
    const c = line[0];
    if (c === '+' && newLeft > 0) {
      h.lines.push({ op: 'add', text: line.slice(1), old: 0, new: newNo++ });
      f.added++;
      newLeft--;
      return true;
    }
    if (c === '-' && oldLeft > 0) {
      h.lines.push({ op: 'delete', text: line.slice(1), old: oldNo++, new: 0 });
      f.deleted++;
      oldLeft--;
      return true;
    }
    if ((c === ' ' || line === '') && oldLeft > 0 && newLeft > 0) {
      h.lines.push({ op: 'context', text: line.slice(1), old: oldNo++, new: newNo++ });
      oldLeft--;
      newLeft--;
      return true;
    }
    return false;
  };

  const lines = text.split('\n');
  if (lines.at(-1) === '') lines.pop();
  for (const line of lines) {
    if (line.startsWith('diff --git ')) {
      file = newFile();
      const m = /^diff --git a\/(.+) b\/(.+)$/.exec(line);
      if (m) {
        file.oldPath = m[1]!;
        file.newPath = m[2]!;
      }
      continue;
    }
    if (!hunk && line.startsWith('--- ')) {
      if (!file || file.hunks.length > 0) file = newFile();
      file.oldPath = stripPrefix(line.slice(4));
      continue;
    }
    if (!hunk && line.startsWith('+++ ') && file) {
      file.newPath = stripPrefix(line.slice(4));
      continue;
    }
    const hm = HUNK.exec(line);
    if (hm) {
      file ??= newFile();
      hunk = {
        header: line,
        oldStart: Number(hm[1]),
        oldLines: hm[2] === undefined ? 1 : Number(hm[2]),
        newStart: Number(hm[3]),
        newLines: hm[4] === undefined ? 1 : Number(hm[4]),
        lines: [],
      };
      file.hunks.push(hunk);
      oldNo = hunk.oldStart;
      newNo = hunk.newStart;
      oldLeft = hunk.oldLines;
      newLeft = hunk.newLines;
      if (oldLeft === 0 && newLeft === 0) hunk = null;
      continue;
    }
    if (line.startsWith('\\')) {
      const last = file?.hunks.at(-1)?.lines.at(-1);
      if (last) last.noEol = true;
      continue;
    }
    const h = hunk as DiffHunk | null;
    if (h && file && bodyLine(h, file, line)) {
      if (oldLeft === 0 && newLeft === 0) hunk = null;
      continue;
    }
    hunk = null; // a line the counts do not allow: the rest is metadata
    file ??= newFile();
    if (/^Binary files .* differ$/.test(line) || line === 'GIT binary patch') file.binary = true;
    file.meta.push(line);
  }
  for (const f of files) f.path = f.newPath || f.oldPath;
  return files;
}

// --- The Go diffview model, as it arrives in JSON --------------------------

export interface FileInfo {
  path?: string;
  mode?: string;
  exists: boolean;
  size: number;
  sha256?: string;
  lines: number;
}

export interface ModelLine {
  op: LineOp;
  old?: number;
  new?: number;
  text: string;
  eol: 'lf' | 'crlf' | 'none';
  spans?: { start: number; end: number }[];
}

export interface ModelHunk {
  oldStart: number;
  oldLines: number;
  newStart: number;
  newLines: number;
  lines: ModelLine[];
}

export interface FileDiffModel {
  status: 'added' | 'deleted' | 'renamed' | 'modeChanged' | 'modified' | 'unchanged';
  old: FileInfo;
  new: FileInfo;
  hunks: ModelHunk[] | null;
  stats: { added: number; deleted: number };
  binary?: { reason: string };
  omitted?: { reason: string; detail: string };
  degraded?: { reason: string; regions: number };
}

/** Copies intra-line spans from the model onto parsed lines that match it. */
export function withSpans(file: DiffFile, model: FileDiffModel | null | undefined): DiffFile {
  if (model) markers(file, model);
  const hunks = model?.hunks ?? [];
  if (hunks.length !== file.hunks.length) return file;
  file.hunks.forEach((h, i) => {
    const mh = hunks[i]!;
    if (mh.lines.length !== h.lines.length) return;
    h.lines.forEach((l, j) => {
      const ml = mh.lines[j]!;
      if (ml.op === l.op && ml.text === l.text && ml.spans?.length) l.spans = ml.spans;
    });
  });
  return file;
}

/** Copies the model's binary and omitted markers and the old line count onto file. */
function markers(file: DiffFile, model: FileDiffModel): void {
  if (model.binary) {
    file.binary = true;
    file.binaryReason = model.binary.reason;
  }
  if (model.omitted) file.omitted = { reason: model.omitted.reason, detail: model.omitted.detail };
  if (model.old?.exists) file.oldTotal = model.old.lines;
}

/** Builds a file from the model alone, when no unified text came with it. */
export function fileFromModel(model: FileDiffModel): DiffFile {
  const path = model.new.path || model.old.path || '';
  const hunks: DiffHunk[] = (model.hunks ?? []).map((h) => ({
    header: `@@ -${h.oldStart},${h.oldLines} +${h.newStart},${h.newLines} @@`,
    oldStart: h.oldStart,
    oldLines: h.oldLines,
    newStart: h.newStart,
    newLines: h.newLines,
    lines: h.lines.map((l) => ({
      op: l.op,
      text: l.text,
      old: l.old ?? 0,
      new: l.new ?? 0,
      spans: l.spans,
      noEol: l.eol === 'none' || undefined,
    })),
  }));
  const file: DiffFile = {
    oldPath: model.old.path ?? '',
    newPath: model.new.path ?? '',
    path,
    meta: [],
    binary: !!model.binary,
    hunks,
    added: model.stats.added,
    deleted: model.stats.deleted,
  };
  markers(file, model);
  return file;
}

/** Splits text into [plain, changed] segments by spans, for highlighting. */
export function segments(text: string, spans: DiffLine['spans']): { text: string; changed: boolean }[] {
  if (!spans?.length) return [{ text, changed: false }];
  const out: { text: string; changed: boolean }[] = [];
  let at = 0;
  for (const s of [...spans].sort((a, b) => a.start - b.start)) {
    const start = Math.max(at, Math.min(s.start, text.length));
    const end = Math.max(start, Math.min(s.end, text.length));
    if (start > at) out.push({ text: text.slice(at, start), changed: false });
    if (end > start) out.push({ text: text.slice(start, end), changed: true });
    at = end;
  }
  if (at < text.length) out.push({ text: text.slice(at), changed: false });
  return out;
}
