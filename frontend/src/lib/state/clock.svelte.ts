// A coarse clock for relative times ("2 minutes ago"): one timer for the
// whole UI, ticking every 15 s while started.
export class Clock {
  now = $state(Date.now());
  #timer: ReturnType<typeof setInterval> | null = null;

  start(): () => void {
    this.now = Date.now();
    this.#timer ??= setInterval(() => (this.now = Date.now()), 15_000);
    return () => this.stop();
  }

  stop(): void {
    if (this.#timer) clearInterval(this.#timer);
    this.#timer = null;
  }
}
