// Localised words for audit entries: the kind of each entry, the surface an
// action came through, and a one-line summary of the recorded data. Unknown
// kinds and values are shown as recorded, never hidden.
import type { AuditEntry } from '../../lib/api';
import { decidedLabel, kindLabel, m, stateLabel } from '../../lib/i18n';

type Msg = () => string;

const KIND: Record<string, Msg> = {
  'workspace.added': m.audit_kind_workspace_added,
  'workspace.removed': m.audit_kind_workspace_removed,
  'run.created': m.audit_kind_run_created,
  'run.transition': m.audit_kind_run_transition,
  'approval.requested': m.audit_kind_approval_requested,
  'approval.resolved': m.audit_kind_approval_resolved,
  'approval.drift': m.audit_kind_approval_drift,
  'grant.added': m.audit_kind_grant_added,
  'policy.changed': m.audit_kind_policy_changed,
  'policy.change_failed': m.audit_kind_policy_change_failed,
  'policy.rule_revoked': m.audit_kind_policy_rule_revoked,
  'action.started': m.audit_kind_action_started,
  'action.finished': m.audit_kind_action_finished,
  'patch.applied': m.audit_kind_patch_applied,
  'patch.rejected': m.audit_kind_patch_rejected,
  'patch.undone': m.audit_kind_patch_undone,
};

export function auditKindLabel(kind: string): string {
  return KIND[kind]?.() ?? kind;
}

const SURFACE: Record<string, Msg> = {
  window: m.surface_window,
  browser: m.surface_browser,
  cli: m.surface_cli,
  engine: m.surface_engine,
  acp: m.surface_acp,
};

export function surfaceLabel(surface: string): string {
  return SURFACE[surface]?.() ?? surface;
}

// The engine's transition reasons (backend/engine: tx.Transition), in the
// reader's language; one this list does not know is shown as recorded.
const REASONS: [RegExp, (g: string[]) => string][] = [
  [/^waiting for a decision$/, () => m.reason_waiting_decision()],
  [/^recovery$/, () => m.reason_recovery()],
  [/^re-enqueued after restart$/, () => m.reason_reenqueued()],
  [/^gated actions? finished$/, () => m.reason_gated_finished()],
  [/^gated action abandoned$/, () => m.reason_gated_abandoned()],
  [/^(\d+) gated actions$/, (g) => m.reason_gated_actions({ count: g[1]! })],
  [/^gated action (\S+)$/, (g) => m.reason_gated_action({ call: g[1]! })],
  [/^sub-agent of (\S+)$/, (g) => m.reason_sub_agent({ run: g[1]! })],
];

/** A run transition's recorded reason in the reader's language. */
export function transitionReason(reason: string): string {
  for (const [re, say] of REASONS) {
    const g = re.exec(reason);
    if (g) return say([...g]);
  }
  return reason;
}

const str = (v: unknown): string => (typeof v === 'string' ? v : typeof v === 'number' ? String(v) : '');

const OUTCOME: Record<string, Msg> = {
  succeeded: m.audit_outcome_succeeded,
  failed: m.audit_outcome_failed,
  error: m.audit_outcome_error,
  suspended: m.audit_outcome_suspended,
};

/** The paths of a patch entry's files ([{path}] or [path]); a count past three. */
function files(v: unknown): string {
  if (!Array.isArray(v)) return '';
  const paths = v.map((f) => (typeof f === 'string' ? f : str((f as { path?: unknown })?.path))).filter(Boolean);
  return paths.length > 3 ? m.audit_detail_files({ count: paths.length }) : paths.join(', ');
}

/**
 * One line on what an entry recorded. runTask names a run by its task when
 * the list knows it.
 */
export function entrySummary(e: AuditEntry, runTask: (runId: string) => string | undefined): string {
  const d = e.data ?? {};
  const parts: string[] = [];
  switch (e.kind) {
    case 'workspace.added':
    case 'workspace.removed':
      parts.push(str(d.name) || str(d.displayPath) || str(d.workspaceId));
      break;
    case 'run.created':
      if (e.runId) parts.push(runTask(e.runId) ?? e.runId);
      if (str(d.profile)) parts.push(m.audit_detail_profile({ profile: str(d.profile) }));
      break;
    case 'run.transition': {
      const to = str(d.to);
      parts.push(`${stateLabel(str(d.from))} → ${stateLabel(to)}`);
      if (str(d.reason)) parts.push(m.audit_detail_reason({ reason: transitionReason(str(d.reason)) }));
      break;
    }
    case 'policy.changed':
    case 'policy.rule_revoked':
      if (str(d.ruleId)) parts.push(m.audit_detail_rule({ rule: str(d.ruleId) }));
      if (str(d.path)) parts.push(str(d.site) === 'data' ? m.settings_rules_source_data({ path: str(d.path) }) : m.settings_rules_source_repository({ path: str(d.path) }));
      break;
    case 'approval.requested':
      if (str(d.kind)) parts.push(kindLabel(str(d.kind)));
      break;
    case 'approval.resolved':
      // By a reviewer (a decision), or by the policy (a rule or a run grant).
      if (str(d.kind)) parts.push(kindLabel(str(d.kind)));
      if (str(d.decision)) parts.push(decidedLabel(str(d.decision)));
      if (str(d.ruleId)) parts.push(m.audit_detail_rule({ rule: str(d.ruleId) }));
      break;
    case 'action.started':
    case 'action.finished':
      if (str(d.title)) parts.push(str(d.title));
      else if (str(d.kind)) parts.push(kindLabel(str(d.kind)));
      if (str(d.outcome)) parts.push(OUTCOME[str(d.outcome)]?.() ?? str(d.outcome));
      break;
    case 'patch.applied':
    case 'patch.rejected':
      parts.push(files(d.files) || str(d.path));
      if (str(d.reason)) parts.push(m.audit_detail_reason({ reason: str(d.reason) }));
      break;
    default:
      for (const [k, v] of Object.entries(d)) {
        const s = str(v);
        if (s && parts.length < 3) parts.push(`${k}: ${s}`);
      }
  }
  return parts.filter(Boolean).join(' · ');
}
