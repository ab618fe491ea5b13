// Errors for people (issue 21): every stable code has a localised title, its
// cause in plain words and a next step offered as an action, in both
// catalogues. ErrorNotice renders them; errors.test.ts walks every code of
// the generated list through it in English and 中文, so a code added in Go
// without its words here fails the build.
import { m } from '../paraglide/messages.js';

type Msg = () => string;

/** What a person can do about an error, as a button. */
export type ErrorAction = 'retry' | 'reload' | 'open_settings' | 'install' | 'choose_folder' | 'dismiss';

interface ErrorWords {
  title: Msg;
  cause: Msg;
  action: ErrorAction;
}

const w = (title: Msg, cause: Msg, action: ErrorAction): ErrorWords => ({ title, cause, action });

/** Title, cause and action by code: the Go codes (FAILURE_CODES) and the client's own. */
export const ERROR_WORDS: Record<string, ErrorWords> = {
  runtime_unavailable: w(m.err_title_runtime_unavailable, m.err_cause_runtime_unavailable, 'install'),
  workspace_outside_allowlist: w(m.err_title_workspace_outside_allowlist, m.err_cause_workspace_outside_allowlist, 'choose_folder'),
  permission_denied: w(m.err_title_permission_denied, m.err_cause_permission_denied, 'open_settings'),
  approval_rejected: w(m.err_title_approval_rejected, m.err_cause_approval_rejected, 'dismiss'),
  run_timeout: w(m.err_title_run_timeout, m.err_cause_run_timeout, 'open_settings'),
  schema_validation_failed: w(m.err_title_schema_validation_failed, m.err_cause_schema_validation_failed, 'open_settings'),
  target_offline: w(m.err_title_target_offline, m.err_cause_target_offline, 'retry'),
  run_interrupted: w(m.err_title_run_interrupted, m.err_cause_run_interrupted, 'retry'),
  context_overflow: w(m.err_title_context_overflow, m.err_cause_context_overflow, 'dismiss'),
  internal_error: w(m.err_title_internal_error, m.err_cause_internal_error, 'retry'),
  not_found: w(m.err_title_not_found, m.err_cause_not_found, 'reload'),
  invalid_input: w(m.err_title_invalid_input, m.err_cause_invalid_input, 'dismiss'),
  active_run_exists: w(m.err_title_active_run_exists, m.err_cause_active_run_exists, 'retry'),
  approval_already_resolved: w(m.err_title_approval_already_resolved, m.err_cause_approval_already_resolved, 'reload'),
  approval_stale: w(m.err_title_approval_stale, m.err_cause_approval_stale, 'reload'),
  unauthorized: w(m.err_title_unauthorized, m.err_cause_unauthorized, 'reload'),
  conflict: w(m.err_title_conflict, m.err_cause_conflict, 'reload'),
  not_ready: w(m.err_title_not_ready, m.err_cause_not_ready, 'retry'),
  engine_unavailable: w(m.err_title_engine_unavailable, m.err_cause_engine_unavailable, 'retry'),
  run_already_resumed: w(m.err_title_run_already_resumed, m.err_cause_run_already_resumed, 'reload'),
  window_unavailable: w(m.err_title_window_unavailable, m.err_cause_window_unavailable, 'install'),
  storage_full: w(m.err_title_storage_full, m.err_cause_storage_full, 'retry'),
  storage_read_only: w(m.err_title_storage_read_only, m.err_cause_storage_read_only, 'retry'),
  store_corrupt: w(m.err_title_store_corrupt, m.err_cause_store_corrupt, 'dismiss'),
  store_too_new: w(m.err_title_store_too_new, m.err_cause_store_too_new, 'install'),
  store_migration_failed: w(m.err_title_store_migration_failed, m.err_cause_store_migration_failed, 'install'),
  audit_key_unavailable: w(m.err_title_audit_key_unavailable, m.err_cause_audit_key_unavailable, 'retry'),
  worktree_unsaved: w(m.err_title_worktree_unsaved, m.err_cause_worktree_unsaved, 'reload'),
  run_imported: w(m.err_title_run_imported, m.err_cause_run_imported, 'dismiss'),
  workspace_missing: w(m.err_title_workspace_missing, m.err_cause_workspace_missing, 'choose_folder'),
  workspace_exists: w(m.err_title_workspace_exists, m.err_cause_workspace_exists, 'choose_folder'),
  playbook_expectation_failed: w(m.err_title_playbook_expectation_failed, m.err_cause_playbook_expectation_failed, 'dismiss'),
  artifact_too_large: w(m.err_title_artifact_too_large, m.err_cause_artifact_too_large, 'dismiss'),
  artifact_secret: w(m.err_title_artifact_secret, m.err_cause_artifact_secret, 'dismiss'),
  unreachable: w(m.err_title_unreachable, m.err_cause_unreachable, 'retry'),
  bad_response: w(m.err_title_bad_response, m.err_cause_bad_response, 'reload'),
};

/** The localised label of an action's button. */
export function actionLabel(a: ErrorAction): string {
  switch (a) {
    case 'retry':
      return m.retry();
    case 'reload':
      return m.action_reload();
    case 'open_settings':
      return m.action_open_settings();
    case 'install':
      return m.action_install();
    case 'choose_folder':
      return m.action_choose_folder();
    case 'dismiss':
      return m.dismiss();
  }
}

/** A localised title for any code; an unknown one gets the internal error's. */
export function errorTitle(code: string): string {
  return (ERROR_WORDS[code] ?? ERROR_WORDS.internal_error!).title();
}

/** The cause in plain words, or '' for a code this build does not know. */
export function errorCause(code: string): string {
  return ERROR_WORDS[code]?.cause() ?? '';
}

/** The action offered for a code; retry for one this build does not know. */
export function errorAction(code: string): ErrorAction {
  return ERROR_WORDS[code]?.action ?? 'retry';
}

// Next steps an error carries as its own (nextSpecific) whose English text
// the catalogue holds: a model server's (backend/llm NextSteps, checked by
// app/api TestModelNextStepsAreLocalised) and a playbook's.
const SPECIFIC_NEXT: Record<string, Msg> = Object.fromEntries(
  [
    m.next_model_auth,
    m.next_model_quota,
    m.next_model_model_unavailable,
    m.next_model_rate_limited,
    m.next_model_provider_error,
    m.next_model_network,
    m.next_model_truncated_stream,
    m.next_model_malformed_stream,
    m.next_model_bad_request,
    m.next_playbook_fix,
  ].map((fn) => [fn({}, { locale: 'en' }), fn]),
);

/** An error's own next step in the reader's language when the catalogue knows it; else as sent. */
export function localizeNext(next: string): string {
  return SPECIFIC_NEXT[next]?.() ?? next;
}

/** A piece of text: plain, or `code` between backticks shown as code. */
export interface Span {
  code: boolean;
  text: string;
}

/** Splits text at backticks so that `agenthub serve` shows as code, not as raw backticks. */
export function codeSpans(text: string): Span[] {
  const parts = text.split('`');
  // An odd backtick (no closing one) is kept as text.
  if (parts.length % 2 === 0) return [{ code: false, text }];
  return parts.map((t, i) => ({ code: i % 2 === 1, text: t })).filter((s) => s.text !== '');
}

/** A backend message key with arguments (backend.Text). */
export interface Text {
  key: string;
  args?: Record<string, string>;
}

type Lookup = Record<string, ((args?: Record<string, string>) => string) | undefined>;

/**
 * Localises text the backend sent as a message key with arguments; a key
 * this build does not know (a newer backend) shows the English fallback the
 * backend sent beside it.
 */
export function localize(t: Text | null | undefined, fallback: string): string {
  if (!t?.key) return fallback;
  const fn = (m as unknown as Lookup)[t.key];
  return typeof fn === 'function' ? fn(t.args ?? {}) : fallback;
}
