// JSON types shared by both transports. Field names follow docs/API.md and the
// Go vocabulary package (backend/*.go). The vocabulary itself (run states,
// coarse statuses, action kinds, decisions, verdicts, event types, failure
// codes) and the typed event payloads are generated from Go into
// generated.ts; this file re-exports them and adds the facades' shapes.
import type * as G from './generated';

export type {
  ActionKind,
  Annotation,
  Coarse,
  DecisionKind,
  EventPayloads,
  EventType,
  FailureCode,
  GateRow,
  GatingAdvisory,
  InferenceAnnotated,
  Risk,
  RunEnded,
  RunState,
  StatusChanged,
  Surface,
  TraceStep,
  Verdict,
} from './generated';
import type { ActionKind, Coarse, DecisionKind, GateRow, RunState, TraceStep, Verdict } from './generated';

export type Theme = 'light' | 'dark' | 'system';
export type Locale = 'en' | 'zh-CN';

export const THEMES: readonly Theme[] = ['light', 'dark', 'system'];
export const LOCALES: readonly Locale[] = ['en', 'zh-CN'];

export interface Settings {
  theme: Theme;
  language: Locale;
  /** Where "always allow in this workspace" writes its rule (issue 21); absent in Set keeps it. */
  ruleLocation?: RuleSite;
}

/** Where a workspace rule lives: AgentHub's data directory, or the repository's .agenthub/policy.toml. */
export type RuleSite = 'data' | 'repository';

/** What the window was asked to show (`agenthub window --approval ID`). */
export interface OpenRequest {
  approvalId?: string;
  /** Show this run's artifacts (`agenthub window --artifacts RUN`). */
  artifactsRunId?: string;
}

export interface Info {
  version: string;
  /** Data directory with the home directory shown as `~`. */
  home: string;
  mode: 'window' | 'browser' | 'cli';
}

/** A model server found on loopback (SystemAPI.LocalModels, backend/llm/local). */
export interface LocalServer {
  kind: 'ollama' | 'lmstudio' | 'llamacpp' | 'vllm';
  /** The product's name: Ollama, LM Studio, llama.cpp, vLLM. */
  label: string;
  /** The OpenAI-compatible endpoint, for a profile's base_url. */
  baseUrl: string;
  /** Sorted; empty when the server has no model installed or loaded. */
  models: string[];
}

export interface Workspace {
  id: string;
  name: string;
  /** Never an absolute machine path: the home directory is shown as `~`. */
  displayPath: string;
  addedAt: string;
  /** The folder is gone from disk: listed, but no run may start in it. */
  missing?: boolean;
}

/** A profile file that cannot be used (RunsAPI.ProfileProblems): its file name and why. */
export interface ProfileProblem {
  file: string;
  problem: string;
}

export interface Failure {
  code: string;
  message: string;
  next: string;
}

export interface RunSummary {
  id: string;
  sessionId: string;
  workspaceId: string;
  profile: string;
  task: string;
  state: RunState;
  coarse: Coarse;
  /** Waiting for a lane (another run of the workspace is active). */
  queued?: boolean;
  doneReason?: string;
  failure?: Failure;
  createdAt?: string;
  lastEventAt: string;
  /** The run's last committed sequence, the resume point for its events. */
  lastSequence?: number;
  pendingApprovals: number;
  scripted: boolean;
  /** Interrupted (failure code run_interrupted) and its runtime can resume from the last checkpoint. */
  resumable?: boolean;
}

export interface StartRunRequest {
  workspaceId: string;
  profile: string;
  task: string;
  /** worktree: the run works in its own git worktree; absent: the workspace's default. */
  isolation?: 'worktree' | 'checkout';
  base?: string;
}

/** A worktree run's worktree and the work it holds that exists nowhere else (docs/API.md). */
export interface WorktreeView {
  runId: string;
  workspaceId: string;
  branch: string;
  base: string;
  state: 'active' | 'kept' | 'merged' | 'discarded';
  outcome?: string;
  missing?: boolean;
  uncommitted?: string[];
  unmerged?: { hash: string; subject: string }[];
  head?: string;
  /** Names this exact listing of unsaved work: a discard confirms it. */
  token?: string;
}

export interface MergeFile {
  path: string;
  status: 'apply' | 'conflict' | 'same' | 'skipped';
  reason?: string;
  checkout: string;
  base: string;
  after: string;
  diff: { hunks: unknown[] };
}

export interface MergePlan {
  runId: string;
  branch: string;
  base: string;
  token: string;
  files: MergeFile[];
}

export interface MergeRequest {
  token: string;
  files?: { path: string; hunks?: number[] }[];
}

export interface MergeResult {
  checkpointId?: string;
  files: { path: string; action: string }[];
  cleaned: boolean;
  remaining: number;
  state: string;
}

export interface PushPlan {
  remote: string;
  branch: string;
  from?: string;
  to: string;
  commits: { hash: string; subject: string }[] | null;
}

/** The event envelope of run-model.md §13.1. */
export interface RunEvent<P = unknown> {
  schemaVersion: number;
  id: string;
  sequence: number;
  type: string;
  runId: string;
  sessionId: string;
  agentId: string;
  timestamp: string;
  payload: P;
}

/** Payload of `system.gap`: re-read (fromSequence..toSequence) with runs.events. */
export type GapPayload = G.Gap;

export interface ApprovalRequest {
  approvalId: string;
  runId: string;
  toolCallId: string;
  kind: ActionKind;
  title: string;
  preview: unknown;
  risk: 'low' | 'medium' | 'high';
  subject: unknown;
  subjectHash: string;
  baseCommit?: string;
  policyTrace: TraceStep[];
  enforcement: 'enforced' | 'advisory';
  decisionsOffered: DecisionKind[];
  grantPreview?: string;
  status: 'pending' | 'resolved';
  createdAt: string;
  /** Other pending requests of the run asking for exactly the same thing; one decision answers them all. */
  mergedApprovalIds?: string[];
  /** The title as a message key with arguments, to show localised (issue 21). */
  titleMessage?: G.Text;
  /** grantPreview as a message key with arguments (rule_shell_prefix, rule_patch …). */
  rule_preview?: G.Text;
  /** Where "always allow in this workspace" writes its rule: the data directory (site "data", path
   *  relative to it) or the repository (site "repository", path ".agenthub/policy.toml"). */
  rule_location?: G.RuleLocation;
  /** Why the risk is what it is when the policy's class decided it (risk_read_only: the command only reads). */
  riskMessage?: G.Text;
}

// The request above narrows two of Go's string fields to their known values;
// it must keep exactly the generated field names, which svelte-check proves
// here: a field renamed, added or dropped in Go fails the frontend's check.
type SameKeys<A, B> = [Exclude<keyof A, keyof B> | Exclude<keyof B, keyof A>] extends [never] ? true : false;
const approvalFieldsMatchGo: SameKeys<ApprovalRequest, G.ApprovalRequest> = true;
void approvalFieldsMatchGo;

export interface HunkRef {
  path: string;
  index: number;
  /** Indexes into the hunk's lines of the added and deleted lines to apply; absent: the whole hunk. */
  lines?: number[];
}

/** What the UI sends; the server stamps decisionId, actor and surface. */
export interface Decision {
  approvalId: string;
  toolCallId?: string;
  decision: DecisionKind;
  subjectHash: string;
  reason?: string;
  hunks?: HunkRef[];
}

export interface DecisionOutcome {
  outcome: string;
}

export interface AuditEntry {
  seq: number;
  at: string;
  actor: string;
  surface: 'window' | 'browser' | 'cli' | 'engine';
  kind: string;
  runId?: string;
  toolCallId?: string;
  subjectHash?: string;
  data: Record<string, unknown>;
  prevHash: string;
  hash: string;
}

export interface AuditFilter {
  runId?: string;
  actor?: string;
  kind?: string;
  workspaceId?: string;
  /** Timestamps (RFC 3339); to is exclusive. */
  from?: string;
  to?: string;
}

export interface AuditVerify {
  ok: boolean;
  brokenSeq?: number;
  head: string;
}

export type Enforcement = 'enforced' | 'advisory';

/** What an external runtime declares it can do (backend.Capabilities). */
export interface Capabilities {
  gating: Partial<Record<ActionKind, Enforcement>>;
  streaming: boolean;
  steer: boolean;
  /** The run can continue after a restart (resume from a checkpoint). */
  durableContinuation: boolean;
  partialApply: boolean;
  usage: boolean;
  scripted: boolean;
}

/** A profile a run may use (RunsAPI.Profiles); the first is the default. */
export interface ProfileInfo {
  name: string;
  /** native | script | claude … */
  runtime: string;
  provider?: string;
  model?: string;
  baseUrl?: string;
  /** A playbook, never an AI model. */
  scripted: boolean;
  default: boolean;
  /** Declared by external runtimes only; absent for the built-in loop and playbooks. */
  capabilities?: Capabilities;
  /** The action kinds whose advisory gating the profile accepts (accept_advisory); its runs are not refused for them. */
  acceptAdvisory?: ActionKind[];
}

export interface PolicyRule {
  class: 'write' | 'shell' | 'network' | 'git';
  id: string;
  pattern: string;
  verdict: Verdict;
  cwd?: string;
  method?: string;
  /** An allow the gate never applies (push). */
  ignored?: boolean;
  examples: number;
  /** The file the rule is in: the repository's (file relative to the workspace) or the data directory's (relative to it). */
  site?: RuleSite;
  file?: string;
  /** What it applies to: every run of the workspace. */
  scope?: 'workspace';
  /** Names the rule for revokeRule; a key of another workspace or a changed rule revokes nothing. */
  key?: string;
  /** Who added it by "always allow", from which surface, when and in which run; absent for a rule written by hand. */
  addedBy?: string;
  addedVia?: string;
  addedAt?: string;
  addedInRun?: string;
}


/** A workspace's effective policy (PolicyAPI.Get). */
export interface PolicyView {
  workspaceId: string;
  file: string;
  source: 'default' | 'file' | 'broken';
  problem?: string;
  rules: PolicyRule[];
  defaults: GateRow[];
}

/** The outcome of exporting the audit trail; file is a base name only. */
export interface AuditExport {
  saved: boolean;
  file?: string;
  entries: number;
  verified: boolean;
  head: string;
  /** Only the entries the active filters matched, of total in the chain. */
  filtered?: boolean;
  total?: number;
}
