// Workspace allowlist state over WorkspacesAPI. Add and remove throw an
// ApiError for the component to show next to the control that failed; load
// errors live in `error` because they replace the whole list.
import { toApiError, type Api, type ApiError, type Workspace } from '../api';

export class WorkspacesState {
  items = $state<Workspace[]>([]);
  status = $state<'loading' | 'ready' | 'error'>('loading');
  error = $state<ApiError | null>(null);

  #api: Pick<Api, 'workspaces'>;
  // Loads overlap when system.changed arrives in bursts: only the latest
  // one's answer is applied, so a slow earlier answer never wins.
  #loads = 0;

  constructor(api: Pick<Api, 'workspaces'>) {
    this.#api = api;
  }

  /** True in the desktop window, where a native folder dialog exists. */
  get canPick(): boolean {
    return typeof this.#api.workspaces.pickDirectory === 'function';
  }

  async load(): Promise<void> {
    if (this.status !== 'ready') this.status = 'loading';
    const mine = ++this.#loads;
    try {
      const items = await this.#api.workspaces.list();
      if (mine !== this.#loads) return;
      this.items = items;
      this.error = null;
      this.status = 'ready';
    } catch (err) {
      if (mine !== this.#loads) return;
      this.error = toApiError(err);
      this.status = 'error';
    }
  }

  /** Opens the native dialog; "" when the user cancelled. */
  async pick(): Promise<string> {
    const pick = this.#api.workspaces.pickDirectory;
    if (!pick) return '';
    try {
      return await pick();
    } catch (err) {
      throw toApiError(err);
    }
  }

  async add(path: string): Promise<Workspace> {
    let ws: Workspace;
    try {
      ws = await this.#api.workspaces.add(path.trim());
    } catch (err) {
      throw toApiError(err);
    }
    this.items = [...this.items.filter((w) => w.id !== ws.id), ws];
    return ws;
  }

  async remove(id: string): Promise<void> {
    try {
      await this.#api.workspaces.remove(id);
    } catch (err) {
      throw toApiError(err);
    }
    this.items = this.items.filter((w) => w.id !== id);
  }
}
