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
    selectable: modelHunks > 0 && modelHunks === file.hunks.length,
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

export function initialSelection(files: PatchFile[]): Selection {
  const s: Selection = {};
  for (const f of files) if (f.selectable) s[f.file.path] = f.file.hunks.map(() => true);
  return s;
}

export function selectedCount(s: Selection): { selected: number; total: number } {
  let selected = 0;
  let total = 0;
  for (const hunks of Object.values(s)) {
    total += hunks.length;
    selected += hunks.filter(Boolean).length;
  }
  return { selected, total };
}

/** The hunks to send: undefined when everything is selected (the whole patch). */
export function hunkRefs(s: Selection): HunkRef[] | undefined {
  const { selected, total } = selectedCount(s);
  if (selected === total) return undefined;
  const refs: HunkRef[] = [];
  for (const [path, hunks] of Object.entries(s)) hunks.forEach((on, index) => on && refs.push({ path, index }));
  return refs;
}

/** The Decision a button sends: always with the subject hash the reviewer saw. */
export function buildDecision(req: ApprovalRequest, decision: DecisionKind, o: { reason?: string; selection?: Selection } = {}): Decision {
  const d: Decision = {
    approvalId: req.approvalId,
    toolCallId: req.toolCallId,
    decision,
    subjectHash: req.subjectHash,
  };
  if (approves(decision) && o.selection) {
    const hunks = hunkRefs(o.selection);
    if (hunks) d.hunks = hunks;
  }
  // The reason is for the agent: with a rejection, or with the hunks an
  // approval leaves out.
  const reason = o.reason?.trim();
  if (reason && (!approves(decision) || d.hunks)) d.reason = reason;
  return d;
}

/** Workspace-relative working directory for display ("." is the root). */
export function displayCwd(cwd: unknown): string {
  if (typeof cwd !== 'string' || cwd === '' || cwd === '.' || cwd === './') return '.';
  return cwd.replace(/^\.\//, '');
}
