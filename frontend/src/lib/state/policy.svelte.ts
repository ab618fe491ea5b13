// Workspace policies for the settings page, one entry per workspace, read
// when first shown and again on request (the files may be edited outside
// AgentHub at any time); revoking a rule (audited by the engine), and the
// setting of where "always allow" writes its rule (issue 21).
import { toApiError, type Api, type ApiError, type PolicyView, type RuleSite } from '../api';

export interface PolicyEntry {
  status: 'loading' | 'ready' | 'error';
  view?: PolicyView;
  error?: ApiError;
}

export class PolicyState {
  byWorkspace = $state<Record<string, PolicyEntry>>({});
  /** Where the next "always allow in this workspace" rule is written. */
  ruleLocation = $state<RuleSite>('data');
  /** The failure of the last revocation or location change, shown beside the rules. */
  actionError = $state<ApiError | null>(null);

  #api: Pick<Api, 'workspaces'> & Partial<Pick<Api, 'settings'>>;

  constructor(api: Pick<Api, 'workspaces'> & Partial<Pick<Api, 'settings'>>) {
    this.#api = api;
  }

  get(workspaceId: string): PolicyEntry | undefined {
    return this.byWorkspace[workspaceId];
  }

  /** Reads the policy of a workspace; a reload keeps the last view while it loads. */
  async load(workspaceId: string): Promise<void> {
    const prev = this.byWorkspace[workspaceId];
    this.byWorkspace[workspaceId] = { status: 'loading', view: prev?.view };
    try {
      const view = await this.#api.workspaces.policy(workspaceId);
      this.byWorkspace[workspaceId] = { status: 'ready', view };
    } catch (err) {
      this.byWorkspace[workspaceId] = { status: 'error', error: toApiError(err) };
    }
  }

  /** Revokes one rule; the list shows the policy as it is afterwards. False when refused. */
  async revoke(workspaceId: string, key: string): Promise<boolean> {
    this.actionError = null;
    try {
      const view = await this.#api.workspaces.revokeRule(workspaceId, key);
      this.byWorkspace[workspaceId] = { status: 'ready', view };
      return true;
    } catch (err) {
      this.actionError = toApiError(err);
      void this.load(workspaceId); // show what is there now
      return false;
    }
  }

  /** Reads the rule location setting. */
  async loadLocation(): Promise<void> {
    if (!this.#api.settings) return;
    try {
      const s = await this.#api.settings.get();
      this.ruleLocation = s.ruleLocation === 'repository' ? 'repository' : 'data';
    } catch (err) {
      this.actionError = toApiError(err);
    }
  }

  /** Saves where the next rule is written; reverted if the save fails. */
  async setLocation(site: RuleSite): Promise<void> {
    if (!this.#api.settings) return;
    const prev = this.ruleLocation;
    this.ruleLocation = site;
    this.actionError = null;
    try {
      const s = await this.#api.settings.get();
      const saved = await this.#api.settings.set({ ...s, ruleLocation: site });
      this.ruleLocation = saved.ruleLocation === 'repository' ? 'repository' : 'data';
    } catch (err) {
      this.ruleLocation = prev;
      this.actionError = toApiError(err);
    }
  }
}
