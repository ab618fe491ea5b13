// Stick-to-bottom for a live list: the list follows new rows while the
// reader is at the bottom, and stops following only when the reader moves
// up themselves (wheel, touch, keys, a drag of the scrollbar). A scroll the
// page makes (a row above growing, the anchoring that follows, our own
// scroll to the bottom) never unsticks it.

/** How close to the bottom counts as at the bottom, in px. */
export const NEAR = 24;
/** How long after an input a scroll counts as the reader's own. */
export const INTENT_MS = 600;

export class Stick {
  stuck: boolean;
  #inputAt = -Infinity;

  constructor(stuck = true) {
    this.stuck = stuck;
  }

  /** The reader used a wheel, touch, key or pointer on the scroller at `now`. */
  input(now: number): void {
    this.#inputAt = now;
  }

  /** A scroll event: `distance` from the bottom. Returns whether to follow. */
  scrolled(distance: number, now: number): boolean {
    if (distance <= NEAR) this.stuck = true;
    else if (now - this.#inputAt <= INTENT_MS) this.stuck = false;
    return this.stuck;
  }

  /** The reader jumped somewhere on purpose (e.g. "back to top"). */
  release(): void {
    this.stuck = false;
  }
}
