// The agent profiles a run may use (RunsAPI.Profiles), loaded once and
// shared by the new-run form, the settings view and the run view's resume
// check. A scripted profile is a playbook and is never presented as an AI
// model.
import { toApiError, type Api, type ApiError, type ProfileInfo, type ProfileProblem } from '../api';
import { m } from '../i18n';

/** Runtimes whose runs AgentHub itself drives, and so can resume. */
const OWN_RUNTIMES = new Set(['native', 'script']);

/**
 * Whether a run of this profile can resume from its last checkpoint: the
 * built-in loop and playbooks can; an external runtime only if it declares
 * durable continuation.
 */
export function canResume(p: ProfileInfo | undefined): boolean {
  if (!p) return false;
  if (p.capabilities) return p.capabilities.durableContinuation;
  return OWN_RUNTIMES.has(p.runtime);
}

/** The profile a new run starts with: the one marked default, else the first. */
export function defaultProfile(list: readonly ProfileInfo[]): ProfileInfo | undefined {
  return list.find((p) => p.default) ?? list[0];
}

/** The runtime in words; an unknown runtime is shown as named. */
export function runtimeLabel(runtime: string): string {
  switch (runtime) {
    case 'native':
      return m.runtime_native();
    case 'script':
      return m.runtime_script();
    case 'claude':
      return m.runtime_claude();
  }
  return runtime;
}

/**
 * The profile as a choice in the new-run form. A scripted profile says so
 * and names no model; any other names its runtime, provider and model.
 */
export function profileOptionLabel(p: ProfileInfo): string {
  if (p.scripted) return p.name === 'demo' ? m.profile_demo_label() : m.profile_option_scripted({ name: p.name });
  const detail = [p.runtime === 'native' ? '' : runtimeLabel(p.runtime), p.provider, p.model].filter(Boolean).join(' · ');
  return detail ? m.profile_option_detail({ name: p.name, detail }) : p.name;
}

/** One sentence on what drives a run of this profile. */
export function profileHint(p: ProfileInfo): string {
  if (p.scripted) return p.name === 'demo' ? m.profile_demo_hint() : m.profile_playbook_hint();
  return p.capabilities ? m.profile_external_hint() : m.profile_native_hint();
}

export class ProfilesState {
  items = $state<ProfileInfo[]>([]);
  /** Profile files that cannot be used and why: shown, not only logged (issue 21). */
  problems = $state<ProfileProblem[]>([]);
  status = $state<'idle' | 'loading' | 'ready' | 'error'>('idle');
  error = $state<ApiError | null>(null);

  #api: Pick<Api, 'runs'>;
  #loading: Promise<void> | null = null;

  constructor(api: Pick<Api, 'runs'>) {
    this.#api = api;
  }

  get(name: string): ProfileInfo | undefined {
    return this.items.find((p) => p.name === name);
  }

  /** Loads the list; concurrent calls share one request. */
  load(): Promise<void> {
    this.#loading ??= this.#load().finally(() => (this.#loading = null));
    return this.#loading;
  }

  async #load(): Promise<void> {
    if (this.status !== 'ready') this.status = 'loading';
    try {
      const [items, problems] = await Promise.all([
        this.#api.runs.profiles(),
        this.#api.runs.profileProblems?.().catch(() => []) ?? Promise.resolve([]),
      ]);
      this.items = items;
      this.problems = problems;
      this.error = null;
      this.status = 'ready';
    } catch (err) {
      this.error = toApiError(err);
      this.status = 'error';
    }
  }
}
