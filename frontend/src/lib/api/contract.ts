// The one typed interface between the UI and Go (docs/API.md). Both
// transports implement it; components receive it through context and never
// learn which transport is behind it.
import type {
  ApprovalRequest,
  AuditEntry,
  AuditExport,
  AuditFilter,
  AuditVerify,
  Decision,
  DecisionOutcome,
  Info,
  LocalServer,
  MergePlan,
  MergeRequest,
  MergeResult,
  OpenRequest,
  PolicyView,
  ProfileInfo,
  RunEvent,
  RunSummary,
  Settings,
  PushPlan,
  StartRunRequest,
  Workspace,
  WorktreeView,
} from './types';
import type { ApiError } from './error';
import type { RunSaved, RunsPage, RunsPageRequest, SearchRequest, SearchResult } from './history';
import type { ChangesAPI } from './changes';
import type { ConflictsAPI } from './conflicts';
import type { ArtifactsAPI } from './artifacts';

export type TransportKind = 'wails' | 'http';

export interface SystemAPI {
  info(): Promise<Info>;
  /** The model servers answering on loopback, with their models; [] when none. */
  localModels(): Promise<LocalServer[]>;
  /**
   * The window only: what it was asked to show, handed out once
   * (`agenthub window --approval ID`, also from a second launch).
   */
  takeOpen?: () => Promise<OpenRequest>;
  /** The window only: calls back when a new open request waits; returns the unsubscribe. */
  onOpen?: (cb: () => void) => () => void;
}

export interface WorkspacesAPI {
  list(): Promise<Workspace[]>;
  add(path: string): Promise<Workspace>;
  remove(id: string): Promise<void>;
  /**
   * Opens the native directory dialog and resolves to the chosen absolute
   * path, or "" when cancelled. Absent in the browser: the UI asks for a path.
   */
  pickDirectory?: () => Promise<string>;
  /** The workspace's effective policy, read-only. */
  policy(id: string): Promise<PolicyView>;
  /** Revokes the rule a PolicyRule.key names (audited); the policy as it is then. */
  revokeRule(id: string, key: string): Promise<PolicyView>;
}

export interface SettingsAPI {
  get(): Promise<Settings>;
  set(s: Settings): Promise<Settings>;
}

export interface RunsAPI {
  list(workspaceId: string): Promise<RunSummary[]>;
  start(req: StartRunRequest): Promise<RunSummary>;
  get(id: string): Promise<RunSummary>;
  /** Events with sequence > after, at most limit of them. */
  events(id: string, after: number, limit: number): Promise<RunEvent[]>;
  cancel(id: string): Promise<RunSummary>;
  /** Continues an interrupted run from its last checkpoint; resolves to the new run. */
  resume(id: string): Promise<RunSummary>;
  /** The profiles a run may use, the default first. */
  profiles(): Promise<ProfileInfo[]>;
  /** Profile files that cannot be used and why (optional: older engines lack it). */
  profileProblems?(): Promise<import('./types').ProfileProblem[]>;
}

export interface ApprovalsAPI {
  list(): Promise<ApprovalRequest[]>;
  decide(d: Decision): Promise<DecisionOutcome>;
}

export interface AuditAPI {
  list(filter: AuditFilter): Promise<AuditEntry[]>;
  verify(): Promise<AuditVerify>;
  /**
   * Exports the entries filter matches (all when absent) as JSON lines, the
   * last line saying which filter and of how many: the window asks where to save it
   * (saved is false when the dialog was cancelled), the browser downloads it.
   */
  export(filter?: AuditFilter): Promise<AuditExport>;
}

/** The worktrees of worktree runs: merge back, keep, discard, push (docs/TOOLS.md#worktree-runs). */
export interface WorktreesAPI {
  /** The run's worktree; rejects with not_found for a run in the checkout. */
  get(runId: string): Promise<WorktreeView>;
  mergePlan(runId: string): Promise<MergePlan>;
  merge(runId: string, req: MergeRequest): Promise<MergeResult>;
  keep(runId: string): Promise<WorktreeView>;
  /** confirm: the token of the unsaved work listed ("" when there is none). */
  discard(runId: string, confirm: string): Promise<WorktreeView>;
  planPush(runId: string, remote: string): Promise<PushPlan>;
  push(runId: string, plan: PushPlan): Promise<PushPlan>;
}

/** Search across every run and a run's bundle (issue 19; docs/API.md#history). */
export interface HistoryAPI {
  /** The best matches first; rejects with invalid_input for a query without a word. */
  search(req: SearchRequest): Promise<SearchResult[]>;
  /** Saves the run's bundle: the window asks where, the browser downloads it. */
  exportRun(runId: string): Promise<RunSaved>;
  /** The runs list, newest first, a page at a time. */
  runsPage?(req: RunsPageRequest): Promise<RunsPage>;
}

export interface StreamHandlers {
  /** A batch of events in arrival order (raw: see sequencer.ts for ordering). */
  onEvents(batch: RunEvent[]): void;
  /** Connection state, for a "reconnecting…" hint. */
  onStatus?(status: 'open' | 'reconnecting' | 'closed'): void;
  /** A fatal stream error (e.g. unauthorized); the stream has stopped. */
  onError?(err: ApiError): void;
}

export interface EventsAPI {
  /** Subscribes to the live events of every run; returns the unsubscribe. */
  subscribe(h: StreamHandlers): () => void;
}

export interface Api {
  readonly transport: TransportKind;
  readonly system: SystemAPI;
  readonly workspaces: WorkspacesAPI;
  readonly settings: SettingsAPI;
  readonly runs: RunsAPI;
  readonly approvals: ApprovalsAPI;
  readonly audit: AuditAPI;
  readonly events: EventsAPI;
  /** Absent in transports that have no worktrees (the in-memory test API). */
  readonly worktrees?: WorktreesAPI;
  /** Absent in the in-memory test API unless a test gives one. */
  readonly history?: HistoryAPI;
  /** A run's change set (changes.ts); absent in the in-memory test API unless a test gives one. */
  readonly changes?: ChangesAPI;
  /** The artifacts of runs (artifacts.ts); absent in the in-memory test API unless a test gives one. */
  readonly artifacts?: ArtifactsAPI;
  /** Workspace conflicts a crash left (conflicts.ts); absent in the in-memory test API unless a test gives one. */
  readonly conflicts?: ConflictsAPI;
}
