// What a run is doing now, as one line (issue 21): the lifecycle states are
// the engine's bookkeeping, and shown as rows they read as "Needs approval →
// Running → Applying → Running" for every approval. The status line says it
// in the user's terms instead, and never says "Applying" while a shell
// command runs: Applying is shown only while an approved change to files is
// written.
import type { RunState } from '../api';
import type { Timeline, ToolItem } from './model';

export type Activity =
  | { kind: 'starting'; state: RunState }
  | { kind: 'approval' }
  | { kind: 'tool'; tool: ToolItem }
  | { kind: 'applying' }
  | { kind: 'writing' }
  | { kind: 'thinking' }
  | { kind: 'state'; state: RunState };

const STARTING: ReadonlySet<RunState> = new Set<RunState>(['Created', 'Planned', 'Accepted', 'Preparing']);
const ENDED: ReadonlySet<RunState> = new Set<RunState>(['Completed', 'Failed', 'Cancelled']);

/**
 * The state to show for a run: its own, except Applying while nothing is
 * written to files (an approved shell command, a network call), which is
 * Running to the user.
 */
export function shownState(t: Timeline, fallback: RunState): RunState {
  const s = t.state ?? fallback;
  if (s === 'Applying' && t.approvedPatch === null) return 'Running';
  return s;
}

/** What the run is doing now; null once it ended. */
export function activity(t: Timeline, fallback: RunState): Activity | null {
  const s = shownState(t, fallback);
  if (ENDED.has(s)) return null;
  if (STARTING.has(s)) return { kind: 'starting', state: s };
  if (s === 'NeedsApproval') return { kind: 'approval' };
  if (s === 'Applying') return { kind: 'applying' };
  const open = t.openTools.at(-1);
  const tool = open === undefined ? undefined : t.items[open];
  if (tool?.kind === 'tool' && s === 'Running') return { kind: 'tool', tool };
  if (s !== 'Running') return { kind: 'state', state: s };
  const last = t.items.at(-1);
  if (last?.kind === 'message' && !last.done) return { kind: 'writing' };
  return { kind: 'thinking' };
}

/** When the run first reached Running (its working time starts there). */
export function startedAt(t: Timeline): string {
  return t.steps.find((s) => s.to === 'Running')?.at ?? t.steps[0]?.at ?? '';
}

/** A duration as 12 s, 4:05 or 1:02:03. */
export function elapsed(ms: number): string {
  if (!Number.isFinite(ms) || ms < 0) ms = 0;
  const total = Math.floor(ms / 1000);
  if (total < 60) return `${total} s`;
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = String(total % 60).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${s}` : `${m}:${s}`;
}

/** Milliseconds between two timestamps (the second defaults to now). */
export function since(from: string, to: string | number = Date.now()): number {
  const a = Date.parse(from);
  const b = typeof to === 'number' ? to : Date.parse(to);
  return Number.isNaN(a) || Number.isNaN(b) ? 0 : b - a;
}
