// The Changes view's model: which rows a scope shows, and the decisions one
// action sends (one per pending approval, each bound to its own hash).
import type { Change, ChangeSet, ChangeState, Decision, DecisionKind } from '../api';
import { patchFiles } from '../approval';
import type { DiffEntry } from '../diff/rows';
import type { ToolItem } from '../timeline/model';

export type Scope = 'turn' | 'run' | 'branch';

/** One file of one change: a row of the tree. */
export interface Row {
  key: string;
  path: string;
  change: Change;
  state: ChangeState;
}

/** The rows of a scope, by path then proposal order ("branch" shows the worktree's files instead). */
export function rows(set: ChangeSet | null, scope: Scope): Row[] {
  if (!set || scope === 'branch') return [];
  const out: Row[] = [];
  for (const c of set.changes) {
    if (scope === 'turn' && c.turn !== set.lastTurn) continue;
    for (const f of c.files) out.push({ key: `${c.toolCallId}:${f.path}`, path: f.path, change: c, state: c.state });
  }
  return out.sort((a, b) => (a.path === b.path ? a.change.sequence - b.change.sequence : a.path < b.path ? -1 : 1));
}

/** The pending changes among rows, one per approval. */
export function pending(rs: readonly Row[]): Change[] {
  const seen = new Set<string>();
  const out: Change[] = [];
  for (const r of rs) {
    const id = r.change.approvalId;
    if (r.change.pending && id && !seen.has(id)) {
      seen.add(id);
      out.push(r.change);
    }
  }
  return out;
}

/** One decision per chosen change: its own approval id and subject hash. */
export function decisions(chosen: readonly Change[], kind: DecisionKind, reason = ''): Decision[] {
  return chosen
    .filter((c) => c.approvalId && c.subjectHash)
    .map((c) => ({
      approvalId: c.approvalId!,
      toolCallId: c.toolCallId,
      decision: kind,
      subjectHash: c.subjectHash!,
      ...(reason ? { reason } : {}),
    }));
}

/** The applied changes still in place (what "revert the run" restores). */
export function revertible(set: ChangeSet | null): Change[] {
  return set ? set.changes.filter((c) => c.state === 'applied' && c.checkpointId) : [];
}

/** The tools whose calls change one file and whose approval shows its diff. */
const FILE_TOOLS = new Set(['write_file', 'edit_file', 'delete_file']);

/** The diff of a file-changing call from its approval's preview; [] when it has none (then its arguments show). */
export function toolDiff(item: Pick<ToolItem, 'name' | 'approval'>): DiffEntry[] {
  const preview = item.approval?.request.preview;
  if (!FILE_TOOLS.has(item.name) || preview === undefined) return [];
  return patchFiles(preview).map((f) => ({ file: f.file }));
}
