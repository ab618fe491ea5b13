// Localised labels for the run vocabulary: states, decisions, action kinds,
// failure titles and done reasons, and relative times. Unknown values fall
// back to the raw value (never to an empty or generic text).
import type { ActionKind, DecisionKind, RunState } from '../api';
import { ERROR_WORDS, errorTitle } from './errors';
import { m } from '../paraglide/messages.js';
import { getLocale } from './locale.svelte';

type Msg = () => string;

const STATE: Record<RunState, Msg> = {
  Created: m.state_created,
  Planned: m.state_planned,
  Accepted: m.state_accepted,
  Preparing: m.state_preparing,
  Running: m.state_running,
  NeedsApproval: m.state_needs_approval,
  Applying: m.state_applying,
  Completed: m.state_completed,
  Failed: m.state_failed,
  Cancelled: m.state_cancelled,
};

export function stateLabel(s: string): string {
  return STATE[s as RunState]?.() ?? s;
}

/** The tone a status label is painted in; the text always says the state too. */
export type Tone = 'neutral' | 'active' | 'waiting' | 'ok' | 'bad' | 'muted';

export function stateTone(s: string): Tone {
  switch (s) {
    case 'Running':
    case 'Applying':
      return 'active';
    case 'NeedsApproval':
      return 'waiting';
    case 'Completed':
      return 'ok';
    case 'Failed':
      return 'bad';
    case 'Cancelled':
      return 'muted';
  }
  return 'neutral';
}

const DECISION: Record<DecisionKind, Msg> = {
  approve_once: m.decision_approve_once,
  approve_for_run: m.decision_approve_for_run,
  always_allow_workspace: m.decision_always_allow_workspace,
  reject_and_tell: m.decision_reject_and_tell,
  reject_and_stop: m.decision_reject_and_stop,
};

const DECIDED: Record<DecisionKind, Msg> = {
  approve_once: m.decided_approve_once,
  approve_for_run: m.decided_approve_for_run,
  always_allow_workspace: m.decided_always_allow_workspace,
  reject_and_tell: m.decided_reject_and_tell,
  reject_and_stop: m.decided_reject_and_stop,
};

export function decisionLabel(d: string): string {
  return DECISION[d as DecisionKind]?.() ?? d;
}

export function decidedLabel(d: string): string {
  return DECIDED[d as DecisionKind]?.() ?? d;
}

const KIND: Record<ActionKind, Msg> = {
  read: m.kind_read,
  write: m.kind_write,
  patch: m.kind_patch,
  shell: m.kind_shell,
  network: m.kind_network,
  commit: m.kind_commit,
  push: m.kind_push,
  publish: m.kind_publish,
  deploy: m.kind_deploy,
  secret: m.kind_secret,
  mcp: m.kind_mcp,
};

export function kindLabel(k: string): string {
  return KIND[k as ActionKind]?.() ?? k;
}

const FAILURE: Record<string, Msg> = {
  runtime_unavailable: m.failure_runtime_unavailable,
  workspace_outside_allowlist: m.failure_workspace_outside_allowlist,
  permission_denied: m.failure_permission_denied,
  approval_rejected: m.failure_approval_rejected,
  run_timeout: m.failure_run_timeout,
  schema_validation_failed: m.failure_schema_validation_failed,
  target_offline: m.failure_target_offline,
  run_interrupted: m.failure_run_interrupted,
  context_overflow: m.failure_context_overflow,
  internal_error: m.failure_internal_error,
};

/** A localised title for a run failure code; the code itself is shown too. */
export function failureTitle(code: string): string {
  return FAILURE[code]?.() ?? (ERROR_WORDS[code] ? errorTitle(code) : m.end_failed_title());
}

export function doneReasonLabel(reason: string): string {
  switch (reason) {
    case 'natural':
      return m.done_natural();
    case 'user_cancelled':
      return m.done_user_cancelled();
    case 'approval_rejected':
      return m.done_approval_rejected();
    case 'parent_cancelled':
      return m.done_parent_cancelled();
    case 'behavior_requested':
      return m.done_behavior_requested();
  }
  if (reason.startsWith('stopped:')) return m.done_stopped({ code: reason.slice('stopped:'.length) });
  return reason;
}

// Formatters per locale: building an Intl formatter costs far more than using
// one, and the sidebar, the inbox and the run header format on every render.
const relative = new Map<string, Intl.RelativeTimeFormat>();
const dateTimes = new Map<string, Intl.DateTimeFormat>();
const clocks = new Map<string, Intl.DateTimeFormat>();
const dates = new Map<string, Intl.DateTimeFormat>();

function cached<F>(formats: Map<string, F>, make: (locale: string) => F): F {
  const locale = getLocale();
  let f = formats.get(locale);
  if (!f) {
    f = make(locale);
    formats.set(locale, f);
  }
  return f;
}

/** "just now", "3 minutes ago", "yesterday", in the current locale. */
export function formatRelative(iso: string, now: number): string {
  const t = new Date(iso).getTime();
  if (Number.isNaN(t)) return '';
  const s = Math.round((t - now) / 1000);
  if (Math.abs(s) < 45) return m.time_just_now();
  const rtf = cached(relative, (l) => new Intl.RelativeTimeFormat(l, { numeric: 'auto' }));
  const min = Math.round(s / 60);
  if (Math.abs(min) < 60) return rtf.format(min, 'minute');
  const h = Math.round(min / 60);
  if (Math.abs(h) < 24) return rtf.format(h, 'hour');
  return rtf.format(Math.round(h / 24), 'day');
}

/** A precise local date and time, for tooltips and the run header. */
export function formatDateTime(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return cached(dateTimes, (l) => new Intl.DateTimeFormat(l, { dateStyle: 'medium', timeStyle: 'medium' })).format(d);
}

/** Time of day with seconds, for timeline rows. */
export function formatClock(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  return cached(clocks, (l) => new Intl.DateTimeFormat(l, { hour: '2-digit', minute: '2-digit', second: '2-digit' })).format(d);
}

/** A calm, locale-aware date (no time) for list rows. */
export function formatDate(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return iso;
  return cached(dates, (l) => new Intl.DateTimeFormat(l, { year: 'numeric', month: 'short', day: 'numeric' })).format(d);
}
