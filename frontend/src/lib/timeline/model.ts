// The timeline of one run as rows for the run view, built from its events in
// sequence order. applyEvents is the reducer: it drops duplicates, holds back
// events that arrive after a hole until the hole is filled, merges streamed
// message deltas into one row per message, folds tool results, streamed
// output, file reads and approvals into their call's row (so an approval sits
// before its tool's result, where it happened), and keeps lifecycle
// transitions out of the rows: the view shows them as one status line
// (issue 21). Every known event type has a rendering (RENDERED_AS); a raw
// "Event x" row is left only for types from a newer AgentHub. It mutates the Timeline it is given, but never a row in place: a row
// that changes is replaced by a new object, so a view holding the rows raw
// (not deeply proxied: a run may have 100,000 events) sees exactly which rows
// changed by identity. Every step is O(1) in the length of the run.
import { TERMINAL_EVENTS, type ApprovalRequest, type DecisionKind, type EventType, type GapPayload, type RunEvent, type RunState } from '../api';

export interface Step {
  to: RunState;
  at: string;
  reason?: string;
}


export interface MessageItem {
  kind: 'message';
  key: string;
  seq: number;
  at: string;
  messageId: string;
  role: string;
  text: string;
  done: boolean;
}

export interface FileRead {
  path: string;
  bytes?: number;
  startLine?: number;
  endLine?: number;
}

export interface ToolItem {
  kind: 'tool';
  key: string;
  seq: number;
  at: string;
  toolCallId: string;
  name: string;
  arguments: unknown;
  result: { status: string; content: string; isError: boolean; at: string } | null;
  /** The output streamed so far (run.tool.delta), shown until the result arrives; its tail is kept. */
  live?: string;
  reads: FileRead[];
  approvalId?: string;
  /** The approval this call asked for, shown in its row before the result. */
  approval?: ApprovalItem;
}

export interface ApprovalItem {
  kind: 'approval';
  key: string;
  seq: number;
  at: string;
  request: ApprovalRequest;
  resolved: { decision: DecisionKind; reason: string; resolver: string; at: string } | null;
}

export interface AppliedFile {
  path: string;
  action: string;
}

export interface PatchItem {
  kind: 'patch';
  key: string;
  seq: number;
  at: string;
  tool: string;
  files: AppliedFile[];
  checkpointId: string;
  /** The preview of the approval that let this change through, when there was one: its diff. */
  preview?: unknown;
  /** The reviewer kept only some hunks of path: their indexes, of `of`. */
  hunks?: { path: string; approved: number[]; of: number };
}

export interface EndItem {
  kind: 'end';
  key: string;
  seq: number;
  at: string;
  outcome: 'Completed' | 'Failed' | 'Cancelled';
  doneReason: string;
  code: string;
  message: string;
  /** The code's default next step (the view localises it by code). */
  recovery: string;
  /** The failure's own next step, when its error named one: shown instead of the default. */
  next: string;
}

/** runtime.gating_advisory: the profile accepted that its runtime only records these kinds of action. */
export interface AdvisoryItem {
  kind: 'advisory';
  key: string;
  seq: number;
  at: string;
  runtime: string;
  kinds: string[];
  acceptedBy: string;
}

/** run.inference.annotated: a plugin hook's notes on one model response. */
export interface AnnotationItem {
  kind: 'annotation';
  key: string;
  seq: number;
  at: string;
  hook: string;
  notes: { label: string; text: string }[];
}

/**
 * An event shown as one line of its own: a proposed or rejected change, an
 * artifact, a runtime starting or drifting from its tested version, an event
 * the runtime sent that could not be read, a workspace conflict, a
 * compacted context. The view words it by type.
 */
export interface NoticeItem {
  kind: 'notice';
  key: string;
  seq: number;
  at: string;
  type: EventType;
  tone: 'neutral' | 'waiting' | 'bad';
  /** The payload's fields the line names (all optional strings). */
  fields: Record<string, string>;
  files: string[];
}

/** An event type from a newer AgentHub: shown by its name (EV13). */
export interface OtherItem {
  kind: 'other';
  key: string;
  seq: number;
  at: string;
  type: string;
}

/** Events the server could not give back (pruned): shown, not hidden. */
export interface GapItem {
  kind: 'gap';
  key: string;
  seq: number;
  at: string;
  from: number;
  to: number;
}

export type Item = MessageItem | ToolItem | ApprovalItem | PatchItem | EndItem | AdvisoryItem | AnnotationItem | NoticeItem | OtherItem | GapItem;

/**
 * How each event type is rendered: as its own kind of row, folded into
 * another row or the status line, or as a notice line. The Record type makes
 * a new Go event type a compile error here, and a test applies one event of
 * every type and fails on a raw row.
 */
export const RENDERED_AS: Readonly<Record<EventType, string>> = {
  'run.created': 'status line',
  'run.started': 'status line',
  'run.status.changed': 'status line',
  'run.completed': 'end row',
  'run.failed': 'end row',
  'run.cancelled': 'end row',
  'runtime.unavailable': 'end row (the run.failed that follows names the code)',
  'runtime.timeout': 'end row (the run.failed that follows names the code)',
  'run.message.delta': 'message row',
  'run.message.completed': 'message row',
  'run.tool.call': 'tool row',
  'run.tool.delta': 'tool row (live output)',
  'run.tool.result': 'tool row (result)',
  'run.file.read': 'tool row (files read), else a notice',
  'run.approval.requested': "tool row (its call's approval), else an approval row",
  'run.approval.resolved': 'the approval it resolves',
  'run.patch.applied': 'patch row',
  'run.checkpoint.created': 'counted (the end row and the undo list)',
  'run.inference.annotated': 'annotation row',
  'runtime.gating_advisory': 'advisory row',
  'system.gap': 'gap row',
  'run.diff.ready': 'notice',
  'run.patch.proposed': 'notice',
  'run.patch.rejected': 'notice',
  'run.artifact.ready': 'notice',
  'run.preview.ready': 'notice',
  'run.context.compacted': 'notice',
  'runtime.started': 'notice',
  'runtime.version_drift': 'notice',
  'schema.validation_failed': 'notice',
  'run.workspace.conflict': 'notice',
  'run.workspace.conflict_resolved': 'folded into its conflict notice (resolved, resolvedBy)',
};

/** Tone of each notice type. */
const NOTICE_TONE: Partial<Record<EventType, NoticeItem['tone']>> = {
  'run.diff.ready': 'neutral',
  'run.patch.proposed': 'neutral',
  'run.patch.rejected': 'bad',
  'run.artifact.ready': 'neutral',
  'run.preview.ready': 'neutral',
  'run.context.compacted': 'neutral',
  'runtime.started': 'neutral',
  'runtime.version_drift': 'waiting',
  'schema.validation_failed': 'waiting',
  'run.workspace.conflict': 'bad',
  'run.file.read': 'neutral',
};

export interface Timeline {
  /** The last sequence applied; events 1..last are in items. */
  last: number;
  items: Item[];
  /** Events after a hole, waiting for it to be filled. */
  pending: RunEvent[];
  /** Set when a re-read is needed: re-read events after `last`. */
  needsFill: boolean;
  state: RunState | null;
  /** Every lifecycle transition, oldest first: the status line's history. */
  steps: Step[];
  end: EndItem | null;
  lastEventAt: string;
  checkpoints: number;
  /** Row index by message id, tool call id and approval id. */
  byMessage: Record<string, number>;
  byTool: Record<string, number>;
  byApproval: Record<string, number>;
  /** Rows of tool calls still without a result, oldest first. */
  openTools: number[];
  /** Row of the last approved patch or write approval not yet matched by a run.patch.applied. */
  approvedPatch: number | null;
}

export function createTimeline(): Timeline {
  return {
    last: 0,
    items: [],
    pending: [],
    needsFill: false,
    state: null,
    steps: [],
    end: null,
    lastEventAt: '',
    checkpoints: 0,
    byMessage: {},
    byTool: {},
    byApproval: {},
    openTools: [],
    approvedPatch: null,
  };
}

type P = Record<string, unknown>;
/** How much of a running tool's streamed output a row keeps (its tail). */
const MAX_LIVE = 64 * 1024;
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
const num = (v: unknown): number | undefined => (typeof v === 'number' ? v : undefined);

/**
 * Applies events (any order, duplicates allowed) to t. Returns true when a
 * hole remains: the caller should re-read the run's events after t.last and
 * apply them (t.needsFill says the same).
 */
export function applyEvents(t: Timeline, events: readonly RunEvent[]): boolean {
  for (const ev of events) {
    if (ev.type === 'system.gap') {
      const gap = ev.payload as GapPayload;
      // Events from fromSequence on were not delivered to us: whatever we
      // hold after it is fine, but nothing past t.last may be trusted to be
      // complete until re-read.
      if (gap.toSequence > t.last) t.needsFill = true;
      continue;
    }
    if (ev.sequence <= t.last) continue;
    t.pending.push(ev);
  }
  if (t.pending.length > 0) {
    t.pending.sort((a, b) => a.sequence - b.sequence);
    let i = 0;
    for (; i < t.pending.length; i++) {
      const ev = t.pending[i]!;
      if (ev.sequence <= t.last) continue; // a duplicate within pending
      if (ev.sequence !== t.last + 1) break;
      reduce(t, ev);
      t.last = ev.sequence;
    }
    t.pending = t.pending.slice(i);
    if (t.pending.length > 0) t.needsFill = true;
  }
  return t.needsFill;
}

/** Clears the fill request once a re-read has been applied. */
export function filled(t: Timeline): void {
  t.needsFill = t.pending.length > 0;
}

/**
 * Gives up on a hole the server cannot fill: records it as a row and applies
 * what was held after it, so the timeline goes on instead of stalling.
 */
export function skipHole(t: Timeline): void {
  const next = t.pending[0];
  if (!next || next.sequence <= t.last + 1) return;
  const from = t.last + 1;
  const to = next.sequence - 1;
  push(t, { kind: 'gap', key: `g${from}`, seq: from, at: next.timestamp, from, to });
  t.last = to;
  applyEvents(t, []);
  filled(t);
}

function push(t: Timeline, item: Item): number {
  t.items.push(item);
  return t.items.length - 1;
}

/** Replaces row idx by a copy with changes: rows are never mutated in place. */
function replace<T extends Item>(t: Timeline, idx: number, item: T, changes: Partial<T>): T {
  const next = { ...item, ...changes };
  t.items[idx] = next;
  if (t.end === item) t.end = next as unknown as EndItem;
  return next;
}

function step(t: Timeline, ev: RunEvent, to: RunState, reason?: string): void {
  t.state = to;
  t.steps.push({ to, at: ev.timestamp, ...(reason ? { reason } : {}) });
}

/** The approval of row idx: an approval row's, or the one folded into a tool row. */
function approvalAt(t: Timeline, idx: number | null | undefined): ApprovalItem | undefined {
  const item = idx === null || idx === undefined ? undefined : t.items[idx];
  if (item?.kind === 'approval') return item;
  if (item?.kind === 'tool') return item.approval;
  return undefined;
}

function notice(t: Timeline, ev: RunEvent, p: P): void {
  const fields: Record<string, string> = {};
  for (const [k, v] of Object.entries(p)) {
    if (typeof v === 'string') fields[k] = v;
    else if (typeof v === 'number' || typeof v === 'boolean') fields[k] = String(v);
  }
  const files = Array.isArray(p.files)
    ? (p.files as unknown[]).map((f) => (typeof f === 'string' ? f : str((f as P | null)?.path))).filter(Boolean)
    : [];
  // A conflict's row resolves it through the API, which names the run.
  if (ev.type === 'run.workspace.conflict' && ev.runId) fields.runId = ev.runId;
  const tone = NOTICE_TONE[ev.type as EventType] ?? 'neutral';
  push(t, { kind: 'notice', key: `n${ev.sequence}`, seq: ev.sequence, at: ev.timestamp, type: ev.type as EventType, tone, fields, files });
}

/** A conflict's resolution marks its notice (a new object, so views update); a resolution without its notice shows nothing. */
function conflictResolved(t: Timeline, p: P): void {
  const i = t.items.findIndex((it) => it.kind === 'notice' && it.type === 'run.workspace.conflict' && it.fields.intentId === str(p.intentId));
  const it = t.items[i];
  if (it?.kind !== 'notice') return;
  t.items[i] = { ...it, fields: { ...it.fields, resolved: str(p.choice), resolvedBy: str(p.actor) } };
}

function reduce(t: Timeline, ev: RunEvent): void {
  const p = (ev.payload ?? {}) as P;
  t.lastEventAt = ev.timestamp;
  switch (ev.type) {
    case 'run.created':
      return step(t, ev, 'Created');
    case 'run.status.changed':
    case 'run.started':
      return step(t, ev, (str(p.to) || 'Running') as RunState, str(p.reason) || undefined);
    case 'run.message.delta':
    case 'run.message.completed':
      return message(t, ev, p);
    case 'run.tool.call': {
      const id = str(p.toolCallId);
      const at = push(t, {
        kind: 'tool',
        // A call id seen before (a runtime that reuses ids) still needs a key of its own.
        key: id && t.byTool[id] === undefined ? `t${id}` : `t${id}.${ev.sequence}`,
        seq: ev.sequence,
        at: ev.timestamp,
        toolCallId: id,
        name: str(p.name),
        arguments: p.arguments ?? null,
        result: null,
        reads: [],
      });
      if (id) t.byTool[id] = at;
      t.openTools.push(at);
      return;
    }
    case 'run.tool.result': {
      const id = str(p.toolCallId);
      const idx = id ? t.byTool[id] : undefined;
      const item = idx === undefined ? undefined : t.items[idx];
      const result = { status: str(p.status), content: str(p.content), isError: p.isError === true, at: ev.timestamp };
      if (item?.kind === 'tool') {
        replace(t, idx!, item, { result });
        const open = t.openTools.lastIndexOf(idx!);
        if (open >= 0) t.openTools.splice(open, 1);
      } else {
        // A result whose call this timeline never saw (a resumed run's first
        // page): its own tool row, named by what the result says.
        push(t, { kind: 'tool', key: `t${id}.${ev.sequence}`, seq: ev.sequence, at: ev.timestamp, toolCallId: id, name: str(p.name) || str(p.tool), arguments: null, result, reads: [] });
      }
      return;
    }
    case 'run.tool.delta': {
      const idx = t.byTool[str(p.toolCallId)];
      const item = idx === undefined ? undefined : t.items[idx];
      if (item?.kind === 'tool') replace(t, idx!, item, { live: ((item.live ?? '') + str(p.text)).slice(-MAX_LIVE) });
      return;
    }
    case 'run.file.read': {
      const read: FileRead = { path: str(p.path), bytes: num(p.bytes), startLine: num(p.startLine), endLine: num(p.endLine) };
      // The newest call still running did the read.
      const idx = t.openTools.at(-1);
      const open = idx === undefined ? undefined : t.items[idx];
      if (open?.kind === 'tool') replace(t, idx!, open, { reads: [...open.reads, read] });
      else notice(t, ev, p);
      return;
    }
    case 'run.approval.requested': {
      const req = ev.payload as ApprovalRequest;
      const appr: ApprovalItem = { kind: 'approval', key: `a${req.approvalId}`, seq: ev.sequence, at: ev.timestamp, request: req, resolved: null };
      const idx = req.toolCallId ? t.byTool[req.toolCallId] : undefined;
      const tool = idx === undefined ? undefined : t.items[idx];
      if (tool?.kind === 'tool' && !tool.result) {
        // In its call's row, before the result it lets through.
        replace(t, idx!, tool, { approvalId: req.approvalId, approval: appr });
        t.byApproval[req.approvalId] = idx!;
        return;
      }
      t.byApproval[req.approvalId] = push(t, appr);
      return;
    }
    case 'run.approval.resolved': {
      const idx = t.byApproval[str(p.approvalId)];
      const appr = approvalAt(t, idx);
      if (appr) {
        const decision = str(p.decision) as DecisionKind;
        const next: ApprovalItem = { ...appr, resolved: { decision, reason: str(p.reason), resolver: str(p.resolver), at: ev.timestamp } };
        const row = t.items[idx!]!;
        if (row.kind === 'tool') replace(t, idx!, row, { approval: next });
        else t.items[idx!] = next;
        const writes = appr.request.kind === 'patch' || appr.request.kind === 'write';
        if (writes && !decision.startsWith('reject')) t.approvedPatch = idx!;
      }
      return;
    }
    case 'run.patch.applied': {
      const files = Array.isArray(p.files) ? (p.files as P[]).map((f) => ({ path: str(f.path), action: str(f.action) })) : [];
      const item: PatchItem = { kind: 'patch', key: `p${ev.sequence}`, seq: ev.sequence, at: ev.timestamp, tool: str(p.tool), files, checkpointId: str(p.checkpointId) };
      // The approval just granted for this change carries its diff.
      const appr = approvalAt(t, t.approvedPatch);
      if (appr) item.preview = appr.request.preview;
      t.approvedPatch = null;
      const h = p.hunks as P | undefined;
      if (h && typeof h === 'object' && Array.isArray(h.approved)) {
        item.hunks = { path: str(h.path), approved: (h.approved as unknown[]).filter((n): n is number => typeof n === 'number'), of: num(h.of) ?? 0 };
      }
      push(t, item);
      return;
    }
    case 'run.checkpoint.created':
      t.checkpoints++;
      return;
    case 'runtime.unavailable':
    case 'runtime.timeout':
      // The run.failed that follows carries the code, message and next
      // step: the end row says it once.
      return;
    case 'run.diff.ready':
    case 'run.patch.proposed':
    case 'run.patch.rejected':
    case 'run.artifact.ready':
    case 'run.preview.ready':
    case 'run.context.compacted':
    case 'runtime.started':
    case 'runtime.version_drift':
    case 'schema.validation_failed':
    case 'run.workspace.conflict':
      return notice(t, ev, p);
    case 'run.workspace.conflict_resolved':
      return conflictResolved(t, p);
    case 'runtime.gating_advisory': {
      const kinds = Array.isArray(p.kinds) ? (p.kinds as unknown[]).map(str) : [];
      push(t, { kind: 'advisory', key: `g${ev.sequence}`, seq: ev.sequence, at: ev.timestamp, runtime: str(p.runtime), kinds, acceptedBy: str(p.acceptedBy) });
      return;
    }
    case 'run.inference.annotated': {
      const list = Array.isArray(p.annotations) ? (p.annotations as unknown[]) : [];
      const notes = list
        .filter((a): a is P => typeof a === 'object' && a !== null)
        .map((a) => ({ label: str(a.label), text: str(a.text) }));
      push(t, { kind: 'annotation', key: `n${ev.sequence}`, seq: ev.sequence, at: ev.timestamp, hook: str(p.hook), notes });
      return;
    }
    case 'run.completed':
    case 'run.failed':
    case 'run.cancelled': {
      // The state each terminal event ends the run in, as Go defines it (generated.ts).
      const outcome = TERMINAL_EVENTS[ev.type as EventType] as EndItem['outcome'];
      const end: EndItem = {
        kind: 'end',
        key: `e${ev.sequence}`,
        seq: ev.sequence,
        at: ev.timestamp,
        outcome,
        doneReason: str(p.doneReason),
        code: str(p.code),
        message: str(p.message),
        recovery: str(p.recovery),
        next: str(p.next),
      };
      t.state = outcome;
      push(t, end);
      t.end = t.items.at(-1) as EndItem;
      return;
    }
  }
  push(t, { kind: 'other', key: `o${ev.sequence}`, seq: ev.sequence, at: ev.timestamp, type: ev.type });
}

function message(t: Timeline, ev: RunEvent, p: P): void {
  const id = str(p.messageId) || `seq${ev.sequence}`;
  const idx = t.byMessage[id];
  let at = idx;
  let item = idx === undefined ? undefined : t.items[idx];
  if (item?.kind !== 'message') {
    at = push(t, {
      kind: 'message',
      key: `m${id}`,
      seq: ev.sequence,
      at: ev.timestamp,
      messageId: id,
      role: str(p.role) || 'assistant',
      text: '',
      done: false,
    });
    t.byMessage[id] = at;
    item = t.items[at] as MessageItem;
  }
  if (ev.type === 'run.message.delta') {
    replace(t, at!, item, { text: item.text + str(p.text) });
    return;
  }
  // The completed message is authoritative: it replaces the streamed text.
  replace(t, at!, item, {
    text: typeof p.text === 'string' ? p.text : item.text,
    role: p.role ? str(p.role) : item.role,
    done: true,
  });
}
