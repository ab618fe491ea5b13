// The history types (issue 19): search across runs and a run's bundle. Go:
// app/api/search.go and app/api/export.go (docs/API.md#history).
import type { RunState } from './types';

export interface SearchRequest {
  query: string;
  /** A workspace's id, name or path. */
  workspace?: string;
  /** Run states, any case. */
  status?: string[];
  /** The run's runtime or profile. */
  runtime?: string;
  /** A date or timestamp; to is exclusive. */
  from?: string;
  to?: string;
  needsApproval?: boolean;
  /** A workspace-relative path the run changed. */
  changedFile?: string;
  runId?: string;
  limit?: number;
}

export interface SnippetPart {
  text: string;
  match?: boolean;
}

/** One matching event: open run runId at event sequence. */
export interface SearchResult {
  runId: string;
  sequence: number;
  type: string;
  timestamp: string;
  snippet: SnippetPart[];
  task: string;
  state: RunState;
  workspaceId: string;
  workspaceName: string;
  profile: string;
  runtime: string;
  createdAt: string;
}

/** One run of the runs list (GET /api/runs/page). */
export interface RunListItem {
  id: string;
  task: string;
  state: RunState;
  workspaceId: string;
  workspaceName: string;
  profile: string;
  createdAt: string;
  lastEventAt: string;
  pendingApprovals: number;
  /** The run this one continues. */
  resumedFrom?: string;
  /** The run that continues this one. */
  resumedBy?: string;
  imported?: boolean;
  /** Pass as before for the next page. */
  cursor: number;
}

export interface RunsPageRequest {
  workspace?: string;
  status?: string[];
  before?: number;
  limit?: number;
}

export interface RunsPage {
  runs: RunListItem[];
  more: boolean;
}

export interface RunSaved {
  /** False when the save dialog was cancelled. */
  saved: boolean;
  file?: string;
  events: number;
  /** The audit head SEQ:HASH the bundle proves up to. */
  head?: string;
}
