// A run's change set (issue 18; docs/API.md#changes): what the run proposed
// and applied, each change's state and diff, line comments, and reverts.
import type { FileDiffModel } from '../diff/unified';
import type { ReviewComment } from './generated';

export type ChangeState = 'proposed' | 'applied' | 'rejected' | 'reverted';

export interface ChangeFile {
  path: string;
  operation?: 'create' | 'modify' | 'delete' | string;
  preimage: string;
  /** The diff the reviewer was (or is) shown; absent when the runtime gave none. */
  diff?: FileDiffModel;
}

export interface Change {
  toolCallId: string;
  approvalId?: string;
  subjectHash?: string;
  checkpointId?: string;
  tool: string;
  /** The step (1-based) it was proposed in. */
  turn: number;
  state: ChangeState;
  reason?: string;
  /** Its approval awaits a decision. */
  pending: boolean;
  files: ChangeFile[];
  sequence: number;
}

/** A reviewer's comment on lines of a change (backend.ReviewComment). */
export type { ReviewComment };

export interface ChangeSet {
  runId: string;
  workspaceId: string;
  lastTurn: number;
  changes: Change[];
  comments: ReviewComment[];
  /** A worktree run's branch against its base. */
  branch?: { base: string; files: FileDiffModel[] };
}

export interface CommentInput {
  approvalId?: string;
  checkpointId?: string;
  path: string;
  startLine: number;
  endLine?: number;
  side?: 'new' | 'old';
  body: string;
}

export interface RevertResult {
  reverted: { checkpointId: string; files: { path: string; action: string }[] }[];
}

export interface ChangesAPI {
  get(runId: string): Promise<ChangeSet>;
  /** Rejects with invalid_input (bad lines, empty text) or not_found (no such pending or applied change of the run). */
  comment(runId: string, c: CommentInput): Promise<ReviewComment>;
  /** checkpointId "" reverts every applied change of the run; rejects with conflict naming the files changed since. */
  revert(runId: string, checkpointId: string): Promise<RevertResult>;
}
