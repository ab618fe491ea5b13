// A runes adapter over @tanstack/virtual-core: the rows in view (plus
// overscan) as $state, each rendered row measured by a ResizeObserver, and
// the scroll position kept when rows above the viewport change height (a new
// language or theme re-wraps text; a row grows). virtual-core does the
// windowing and anchoring; this file only bridges it to Svelte 5 without the
// store-based adapter (whose setOptions inside an effect loops).
import {
  Virtualizer,
  elementScroll,
  measureElement,
  observeElementOffset,
  observeElementRect,
  type Rect,
  type VirtualItem,
} from '@tanstack/virtual-core';

export type { VirtualItem };

export interface ListOptions {
  count: number;
  /** Estimated height of row i before it is measured. */
  estimate: (i: number) => number;
  /** Stable key of row i (rows that move keep their measured height). */
  key: (i: number) => string | number;
  overscan?: number;
  /** Space between rows, in px. */
  gap?: number;
  /** Distance from the top of the scroll content to the first row. */
  margin?: number;
  /**
   * Follow the end, as a chat does: while the view is at the bottom it stays
   * there when rows are appended or the last rows grow; scrolled up, the row
   * at the top of the view keeps its place.
   */
  follow?: boolean;
}

/** Height to assume when the scroller has none (no layout yet, or a test DOM). */
function fallbackHeight(): number {
  return typeof window === 'undefined' ? 800 : window.innerHeight || 800;
}

export class VirtualList {
  /** The rows to render, in order, with their offsets. */
  items = $state.raw<VirtualItem[]>([]);
  /** Height of all rows (estimated where not measured). */
  total = $state(0);

  #v: Virtualizer<HTMLElement, HTMLElement>;
  #el: HTMLElement | null = null;
  #opts: ListOptions;

  constructor(opts: ListOptions) {
    this.#opts = opts;
    this.#v = new Virtualizer<HTMLElement, HTMLElement>(this.#options(opts));
  }

  #options(o: ListOptions) {
    return {
      count: o.count,
      estimateSize: o.estimate,
      getItemKey: o.key,
      overscan: o.overscan ?? 8,
      gap: o.gap ?? 0,
      scrollMargin: o.margin ?? 0,
      anchorTo: o.follow ? ('end' as const) : ('start' as const),
      followOnAppend: o.follow ?? false,
      getScrollElement: () => this.#el,
      scrollToFn: elementScroll,
      observeElementOffset,
      observeElementRect: (v: Virtualizer<HTMLElement, HTMLElement>, cb: (r: Rect) => void) =>
        observeElementRect(v, (r) => cb(r.height > 0 ? r : { width: r.width, height: fallbackHeight() })),
      initialRect: { width: 0, height: fallbackHeight() },
      // A row without layout (a test DOM, a hidden tab) measures 0: keep its estimate.
      measureElement: (el: HTMLElement, entry: ResizeObserverEntry | undefined, v: Virtualizer<HTMLElement, HTMLElement>) =>
        measureElement(el, entry, v) || o.estimate(v.indexFromElement(el)),
      onChange: () => this.#sync(),
    };
  }

  #sync(): void {
    this.items = this.#v.getVirtualItems();
    this.total = this.#v.getTotalSize();
  }

  /** Binds the list to its scroll container; returns the detach function. */
  attach(el: HTMLElement): () => void {
    this.#el = el;
    const cleanup = this.#v._didMount();
    this.#v._willUpdate();
    // Rows may have arrived before the container did: open at the end then.
    if (this.#opts.follow && this.#opts.count > 0) this.#v.scrollToEnd();
    this.#sync();
    return () => {
      cleanup();
      this.#el = null;
    };
  }

  /** Takes new options (count, margin, …); call from an effect, not a derived. */
  update(changes: Partial<ListOptions>): void {
    const before = this.#opts.count;
    this.#opts = { ...this.#opts, ...changes };
    this.#v.setOptions(this.#options(this.#opts));
    this.#v._willUpdate();
    // A following list opens at its end: position it before the first rows
    // render, instead of rendering the top and then jumping.
    if (this.#opts.follow && before === 0 && this.#opts.count > 0 && this.#el) this.#v.scrollToEnd();
    this.#sync();
  }

  /** An attachment for a rendered row (it needs data-index): measures it now and on resize. */
  measure = (node: HTMLElement): (() => void) => {
    this.#v.measureElement(node);
    return () => this.#v.measureElement(null);
  };

  scrollToIndex(index: number, align: 'start' | 'center' | 'end' | 'auto' = 'auto'): void {
    this.#v.scrollToIndex(index, { align });
  }

  scrollToEnd(): void {
    this.#v.scrollToEnd();
  }

  /** Whether the view is at the end (within 1 px). */
  atEnd(): boolean {
    return this.#v.getDistanceFromEnd() <= 1;
  }

  scrollToOffset(offset: number): void {
    this.#v.scrollToOffset(offset);
  }

  /** Index of the row at the top of the viewport, or -1 when there are none. */
  firstVisible(): number {
    const top = this.#v.scrollOffset ?? 0;
    return this.#v.getVirtualItemForOffset(top)?.index ?? -1;
  }
}

/** Calls cb with node's height now and whenever it changes (once where there is no ResizeObserver). */
export function watchHeight(node: HTMLElement, cb: (height: number) => void): () => void {
  cb(node.offsetHeight);
  if (typeof ResizeObserver === 'undefined') return () => {};
  const ro = new ResizeObserver(() => cb(node.offsetHeight));
  ro.observe(node);
  return () => ro.disconnect();
}
