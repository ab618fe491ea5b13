// What an approval request means for the dialog: how strongly to frame it
// (read-only review vs. write, command, network, release), whether its name
// must be typed, the files and hunks of a patch preview, and the Decision a
// button sends. Plain functions, unit-tested without a DOM.
import type { ActionKind, ApprovalRequest, Decision, DecisionKind, HunkRef } from '../api';
import { fileFromModel, parseUnified, withSpans, type DiffFile, type FileDiffModel } from '../diff/unified';

export type Tier = 'read' | 'write' | 'shell' | 'network' | 'release';

export function tier(kind: ActionKind | string): Tier {
  switch (kind) {
    case 'read':
      return 'read';
    case 'shell':
      return 'shell';
    case 'network':
      return 'network';
    case 'push':
    case 'publish':
    case 'deploy':
      return 'release';
  }
  return 'write';
}

/** Push, publish and deploy always ask, and the reviewer types the action's name. */
export function confirmWord(kind: ActionKind | string): string | null {
  return kind === 'push' || kind === 'publish' || kind === 'deploy' ? kind : null;
}

export const APPROVING: readonly DecisionKind[] = ['approve_once', 'approve_for_run', 'always_allow_workspace'];

export function approves(d: DecisionKind): boolean {
  return APPROVING.includes(d);
}

export interface PatchFile {
  file: DiffFile;
  /** create | modify | delete, when the preview says. */
  operation: string;
  binary: boolean;
  omitted: string;
  /** The Go model has hunks: the reviewer may pick some of them. */
  selectable: boolean;
}

type Rec = Record<string, unknown>;
const isRec = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v);

function one(p: Rec): PatchFile | null {
  const model = isRec(p.diff) ? (p.diff as unknown as FileDiffModel) : null;
  const unified = typeof p.unified === 'string' ? p.unified : '';
  let file: DiffFile | undefined = unified ? parseUnified(unified)[0] : undefined;
  if (file && model) file = withSpans(file, model);
  if (!file && model) file = fileFromModel(model);
  if (!file) return null;
  if (!file.path && typeof p.path === 'string') file.path = p.path;
  const modelHunks = model?.hunks?.length ?? 0;
  return {
    file,
    operation: typeof p.operation === 'string' ? p.operation : '',
    binary: !!model?.binary || file.binary,
    omitted: model?.omitted ? model.omitted.detail || model.omitted.reason : '',
    // Hunk and line indexes go back to Go as they are: they must be the model's.
    selectable:
      modelHunks > 0 &&
      modelHunks === file.hunks.length &&
      file.hunks.every((h, i) => h.lines.length === (model?.hunks?.[i]?.lines?.length ?? -1)),
  };
}

/** The files of a patch preview: {unified, diff, path} or {files: [...]}. */
export function patchFiles(preview: unknown): PatchFile[] {
  if (!isRec(preview)) return [];
  if (Array.isArray(preview.files)) return preview.files.filter(isRec).map(one).filter((f): f is PatchFile => f !== null);
  const f = one(preview);
  return f ? [f] : [];
}

/** Hunk selection per file path; every hunk starts selected. */
export type Selection = Record<string, boolean[]>;

/**
 * Hunks chosen line by line, by file path and hunk index: the indexes (into
 * the hunk's lines) of the added and deleted lines kept. A hunk absent here
 * is chosen whole or not at all, by Selection.
 */
export type LinePicks = Record<string, Record<number, number[]>>;

export function initialSelection(files: PatchFile[]): Selection {
  const s: Selection = {};
  for (const f of files) if (f.selectable) s[f.file.path] = f.file.hunks.map(() => true);
  return s;
}

/** Indexes of a hunk's added and deleted lines: what a line choice can pick. */
export function changedLines(hunk: { lines: readonly { op: string }[] }): number[] {
  const out: number[] = [];
  hunk.lines.forEach((l, i) => l.op !== 'context' && out.push(i));
  return out;
}

export interface Counts {
  selected: number;
  total: number;
  /** What is counted: hunks, or changed lines once any hunk is chosen line by line. */
  unit: 'hunks' | 'lines';
}

/**
 * How much of the change is selected. Counted in hunks until a hunk is
 * chosen line by line, then in changed lines (of every selectable hunk).
 */
export function selectedCount(s: Selection, picks: LinePicks = {}, files: PatchFile[] = []): Counts {
  const byLines = Object.values(picks).some((h) => Object.keys(h).length > 0);
  let selected = 0;
  let total = 0;
  for (const [path, hunks] of Object.entries(s)) {
    const file = files.find((f) => f.file.path === path)?.file;
    hunks.forEach((on, i) => {
      if (!byLines) {
        total++;
        if (on) selected++;
        return;
      }
      const changed = file?.hunks[i] ? changedLines(file.hunks[i]).length : 1;
      total += changed;
      const p = picks[path]?.[i];
      selected += p ? p.length : on ? changed : 0;
    });
  }
  return { selected, total, unit: byLines ? 'lines' : 'hunks' };
}

/** The hunks to send: undefined when everything is selected (the whole patch). */
export function hunkRefs(s: Selection, picks: LinePicks = {}, files: PatchFile[] = []): HunkRef[] | undefined {
  const { selected, total } = selectedCount(s, picks, files);
  if (selected === total) return undefined;
  const refs: HunkRef[] = [];
  for (const [path, hunks] of Object.entries(s)) {
    const file = files.find((f) => f.file.path === path)?.file;
    hunks.forEach((on, index) => {
      const p = picks[path]?.[index];
      if (!p) {
        if (on) refs.push({ path, index });
        return;
      }
      if (p.length === 0) return;
      const all = file?.hunks[index] ? changedLines(file.hunks[index]).length : -1;
      refs.push(p.length === all ? { path, index } : { path, index, lines: [...p].sort((a, b) => a - b) });
    });
  }
  return refs;
}

/** The Decision a button sends: always with the subject hash the reviewer saw. */
export function buildDecision(
  req: ApprovalRequest,
  decision: DecisionKind,
  o: { reason?: string; selection?: Selection; picks?: LinePicks; files?: PatchFile[] } = {},
): Decision {
  const d: Decision = {
    approvalId: req.approvalId,
    toolCallId: req.toolCallId,
    decision,
    subjectHash: req.subjectHash,
  };
  if (approves(decision) && o.selection) {
    const hunks = hunkRefs(o.selection, o.picks, o.files);
    if (hunks) d.hunks = hunks;
  }
  // The reason is for the agent: with a rejection, or with the hunks an
  // approval leaves out.
  const reason = o.reason?.trim();
  if (reason && (!approves(decision) || d.hunks)) d.reason = reason;
  return d;
}

/** Where "always allow in this workspace" writes its rule, as the request says (issue 21). */
export interface RuleLocation {
  site: string;
  path: string;
}

export function ruleLocation(req: ApprovalRequest): RuleLocation | null {
  const loc = (req as { rule_location?: unknown }).rule_location;
  return isRec(loc) && typeof loc.site === 'string' && typeof loc.path === 'string' ? { site: loc.site, path: loc.path } : null;
}

/** A policy trace with each identical step shown once, in first-seen order. */
export function uniqueTrace<T extends { rule: string; pattern?: string; matched?: boolean; verdict?: string }>(trace: readonly T[]): T[] {
  const seen = new Set<string>();
  return trace.filter((s) => {
    const key = JSON.stringify([s.rule, s.pattern ?? '', !!s.matched, s.verdict ?? '']);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}

/** Workspace-relative working directory for display ("." is the root). */
export function displayCwd(cwd: unknown): string {
  if (typeof cwd !== 'string' || cwd === '' || cwd === '.' || cwd === './') return '.';
  return cwd.replace(/^\.\//, '');
}

/**
 * Gives focus back to where it was before a dialog opened, when the dialog
 * closes; but not when focus has already moved on to something that is not
 * this dialog (the next dialog, opened as this one closed, focused its own
 * decisions: taking it back sent the keys elsewhere, issue 21).
 */
export function restoreFocus(before: HTMLElement | null, self: HTMLElement | undefined): void {
  const active = document.activeElement;
  const elsewhere = active && active !== document.body && !(self?.contains(active) ?? false);
  if (!elsewhere) before?.focus?.();
}
