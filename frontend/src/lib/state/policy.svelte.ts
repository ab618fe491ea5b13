// Workspace policies for the read-only viewer in settings, one entry per
// workspace, read when first shown and again on request (the file may be
// edited outside AgentHub at any time).
import { toApiError, type Api, type ApiError, type PolicyView } from '../api';

export interface PolicyEntry {
  status: 'loading' | 'ready' | 'error';
  view?: PolicyView;
  error?: ApiError;
}

export class PolicyState {
  byWorkspace = $state<Record<string, PolicyEntry>>({});

  #api: Pick<Api, 'workspaces'>;

  constructor(api: Pick<Api, 'workspaces'>) {
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
}
