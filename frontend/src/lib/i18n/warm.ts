// The first Intl formatter a page builds loads ICU's locale and time-zone
// data: about 100 ms in Chromium on the reference machine, far more under
// load; every formatter after it takes a millisecond or two, whatever its
// locale. main.ts builds one while the app's chunk is still loading (the
// main thread has nothing else to do then), so that cost is not paid when
// the first timeline rows or run dates are formatted.

/** Builds and uses a throwaway date formatter; safe to call more than once. */
export function warmDateFormatting(): void {
  try {
    new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit', second: '2-digit' }).format(0);
  } catch {
    // Intl missing or broken: the formatters report it where they are used.
  }
}
