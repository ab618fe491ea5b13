import { describe, expect, it } from 'vitest';
import { flushSync } from 'svelte';
import { VirtualList } from './list.svelte';
import { INTENT_MS, NEAR, Stick } from './stick';

/** A scroll container with a fixed viewport, since jsdom has no layout. */
function scroller(height: number) {
  const el = document.createElement('div');
  let top = 0;
  Object.defineProperty(el, 'clientHeight', { get: () => height });
  Object.defineProperty(el, 'clientWidth', { get: () => 600 });
  Object.defineProperty(el, 'scrollHeight', { get: () => 10_000_000 });
  Object.defineProperty(el, 'scrollTop', {
    get: () => top,
    set: (v: number) => (top = v),
  });
  el.scrollTo = ((o: ScrollToOptions) => {
    top = o.top ?? top;
    el.dispatchEvent(new Event('scroll'));
  }) as typeof el.scrollTo;
  document.body.append(el);
  return {
    el,
    scroll(to: number) {
      top = to;
      el.dispatchEvent(new Event('scroll'));
    },
    get top() {
      return top;
    },
  };
}

function row(index: number, height: number): HTMLElement {
  const r = document.createElement('div');
  r.dataset.index = String(index);
  Object.defineProperty(r, 'offsetHeight', { get: () => height });
  document.body.append(r);
  return r;
}

const indexes = (v: VirtualList) => v.items.map((i) => i.index);
/** virtual-core does not measure while a scroll is in progress (150 ms after the last event). */
const scrollSettled = () => new Promise((r) => setTimeout(r, 200));

describe('VirtualList (windowing over @tanstack/virtual-core)', () => {
  it('renders only the rows in view plus overscan, and follows the scroll', () => {
    const s = scroller(200);
    const v = new VirtualList({ count: 10_000, estimate: () => 20, key: (i) => `k${i}`, overscan: 2 });
    const detach = v.attach(s.el);
    expect(indexes(v)).toEqual([...Array(12).keys()]); // 10 in view + 2
    expect(v.total).toBe(200_000);

    s.scroll(100_000); // row 5000 at the top
    flushSync();
    expect(indexes(v)[0]).toBe(4998);
    expect(indexes(v).at(-1)).toBe(5011);
    expect(v.items[2]!.start).toBe(100_000);
    detach();
  });

  it('uses measured heights, and keeps the view still when a row above it grows', async () => {
    const s = scroller(200);
    const v = new VirtualList({ count: 1000, estimate: () => 20, key: (i) => i, overscan: 1, gap: 4 });
    v.attach(s.el);
    expect(v.total).toBe(1000 * 20 + 999 * 4);
    s.scroll(2400); // row 100
    await scrollSettled();
    flushSync();
    const first = v.items.find((i) => i.start >= 2400)!;
    expect(first.index).toBe(100);

    // Row 3 (far above) turns out 70 px taller than estimated.
    v.measure(row(3, 90));
    expect(v.total).toBe(1000 * 20 + 999 * 4 + 70);
    expect(s.top).toBe(2470); // scrolled along: row 100 stays where the reader saw it
    expect(v.items.find((i) => i.index === 100)!.start).toBe(2470);

    // A row below the top of the view grows: nothing above it moves.
    v.measure(row(101, 50));
    expect(s.top).toBe(2470);
  });

  it('takes new counts (rows appended) and scrolls to an index', () => {
    const s = scroller(100);
    const v = new VirtualList({ count: 3, estimate: () => 50, key: (i) => i, overscan: 0 });
    v.attach(s.el);
    expect(indexes(v)).toEqual([0, 1]);
    v.update({ count: 500 });
    expect(v.total).toBe(25_000);
    v.scrollToIndex(400, 'start');
    flushSync();
    expect(s.top).toBe(20_000);
    expect(indexes(v)[0]).toBe(400);
    expect(v.firstVisible()).toBe(400);
  });

  it('falls back to the window height when the scroller has no layout', () => {
    const el = document.createElement('div');
    const v = new VirtualList({ count: 1000, estimate: () => 100, key: (i) => i, overscan: 0 });
    v.attach(el);
    expect(v.items.length).toBe(Math.ceil(window.innerHeight / 100));
  });
});

describe('Stick (follow the bottom of a live list)', () => {
  it('starts stuck, unsticks only on the reader moving up, sticks again at the bottom', () => {
    const s = new Stick();
    expect(s.stuck).toBe(true);
    // The page scrolled (a row above grew): still stuck.
    expect(s.scrolled(300, 1000)).toBe(true);
    // The reader scrolled up with the wheel.
    s.input(2000);
    expect(s.scrolled(300, 2000 + INTENT_MS - 1)).toBe(false);
    // Rows arrive: no follow while away, whatever the page does.
    expect(s.scrolled(900, 5000)).toBe(false);
    // Back at the bottom (within NEAR): follow again.
    expect(s.scrolled(NEAR, 6000)).toBe(true);
    s.release();
    expect(s.stuck).toBe(false);
  });
});

describe('VirtualList follow mode', () => {
  it('opens at the end when the first rows arrive, without rendering the top first', () => {
    const s = scroller(200);
    const v = new VirtualList({ count: 0, estimate: () => 20, key: (i) => i, overscan: 1, follow: true });
    v.attach(s.el);
    v.update({ count: 100 });
    expect(indexes(v)).toEqual([89, 90, 91, 92, 93, 94, 95, 96, 97, 98, 99]);
    expect(s.top).toBeGreaterThan(1700);
  });
});
