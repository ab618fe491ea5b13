// Workspace conflicts a crash left (issue 15; docs/RELIABILITY.md#conflicts):
// the user keeps what is on disk or restores the content from before.
export type ConflictChoice = 'keep' | 'restore';

/** backend.WorkspaceConflictResolved, the payload of run.workspace.conflict_resolved. */
export interface ConflictResolution {
  intentId: string;
  choice: ConflictChoice;
  files: { path: string; before: string; after: string; found: string }[];
  restoreCheckpointId?: string;
  actor: string;
  surface: string;
}

export interface ConflictsAPI {
  /** Rejects with conflict (already resolved, or a file changed since: restore writes nothing) or not_found. */
  resolve(runId: string, intentId: string, choice: ConflictChoice): Promise<ConflictResolution>;
}
