// A component loaded on demand, cached for the life of the page. `current`
// is reactive, so once the chunk is in, the view renders in the same tick as
// any other: reading it when nothing is loaded yet starts the load.
import type { Component } from 'svelte';

export class Lazy<C extends Component<any>> {
  #loaded = $state<C | null>(null);
  #failed = $state(false);
  #pending: Promise<C> | null = null;
  #load: () => Promise<{ default: C }>;

  constructor(load: () => Promise<{ default: C }>) {
    this.#load = load;
  }

  /** The component, or null while its chunk loads (which this starts). */
  get current(): C | null {
    if (!this.#loaded && !this.#failed) void this.load().catch(() => {});
    return this.#loaded;
  }

  /** True when the last load failed; `retry` tries again. */
  get failed(): boolean {
    return this.#failed;
  }

  /** Loads the chunk once; a failed load may be retried. */
  load(): Promise<C> {
    this.#pending ??= this.#load().then(
      (mod) => (this.#loaded = mod.default),
      (err: unknown) => {
        this.#pending = null;
        this.#failed = true;
        throw err;
      },
    );
    return this.#pending;
  }

  retry(): void {
    this.#failed = false;
    void this.load().catch(() => {});
  }
}
