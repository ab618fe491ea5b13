// i18n: paraglide messages (messages/{en,zh-CN}.json, compiled into
// lib/paraglide by `npm run i18n`), the reactive locale, and localised
// formatting of errors and dates.
import { m } from '../paraglide/messages.js';
import type { ApiError } from '../api';
import { errorAction, errorCause, errorTitle, localizeNext, type ErrorAction } from './errors';

export { m };
export { getLocale, setLocale } from './locale.svelte';
export * from './labels';
export * from './errors';

type Msg = () => string;

// Next steps by code, localised; mirrors backend.Recovery in Go.
const NEXT: Record<string, Msg> = {
  runtime_unavailable: m.next_runtime_unavailable,
  workspace_outside_allowlist: m.next_workspace_outside_allowlist,
  permission_denied: m.next_permission_denied,
  approval_rejected: m.next_approval_rejected,
  run_timeout: m.next_run_timeout,
  schema_validation_failed: m.next_schema_validation_failed,
  target_offline: m.next_target_offline,
  run_interrupted: m.next_run_interrupted,
  context_overflow: m.next_context_overflow,
  internal_error: m.next_internal_error,
  not_found: m.next_not_found,
  workspace_exists: m.next_workspace_exists,
  playbook_expectation_failed: m.next_playbook_expectation_failed,
  engine_unavailable: m.next_engine_unavailable,
  run_already_resumed: m.next_run_already_resumed,
  window_unavailable: m.next_window_unavailable,
  invalid_input: m.next_invalid_input,
  active_run_exists: m.next_active_run_exists,
  approval_already_resolved: m.next_approval_already_resolved,
  approval_stale: m.next_approval_stale,
  unauthorized: m.next_unauthorized,
  conflict: m.next_conflict,
  not_ready: m.next_not_ready,
  storage_full: m.next_storage_full,
  artifact_too_large: m.next_artifact_too_large,
  artifact_secret: m.next_artifact_secret,
  storage_read_only: m.next_storage_read_only,
  store_corrupt: m.next_store_corrupt,
  store_too_new: m.next_store_too_new,
  run_imported: m.next_run_imported,
  store_migration_failed: m.next_store_migration_failed,
  audit_key_unavailable: m.next_audit_key_unavailable,
  worktree_unsaved: m.next_worktree_unsaved,
  workspace_missing: m.next_workspace_missing,
  unreachable: m.next_unreachable,
  bad_response: m.next_bad_response,
};

// Messages the client writes itself; server messages are shown as sent.
const CLIENT_MESSAGE: Record<string, Msg> = {
  unreachable: m.message_unreachable,
  bad_response: m.message_bad_response,
};

export interface ErrorText {
  code: string;
  message: string;
  next: string;
  /** Localised title, cause in plain words and the action offered (errors.ts). */
  title: string;
  cause: string;
  action: ErrorAction;
}

/** The localised code, message and next step to show for err. */
export function describeError(
  err: Pick<ApiError, 'code' | 'message' | 'next'> & { nextSpecific?: boolean },
): ErrorText {
  const clientMsg = CLIENT_MESSAGE[err.code];
  let message = clientMsg ? clientMsg() : err.message;
  // Errors without a server body (a proxy's 502, a bare 401) carry no message.
  if (!message || message === err.code) {
    message = err.code === 'unauthorized' ? m.message_unauthorized() : m.message_bad_response();
  }
  // The error's own next step (a missing CLI's install command) beats the
  // code's generic one; the generic one is localised, the specific one is
  // shown as sent, like the message.
  const next = err.nextSpecific && err.next ? localizeNext(err.next) : (NEXT[err.code]?.() ?? err.next);
  return { code: err.code, message, next, title: errorTitle(err.code), cause: errorCause(err.code), action: errorAction(err.code) };
}
