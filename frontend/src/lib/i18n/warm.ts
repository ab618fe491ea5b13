// The first Intl formatter a page builds loads ICU's data: about 100 ms in
// Chromium on the reference machine, far more under load. After it, another
// formatter of the same locale takes about 0.3 ms and one of another locale a
// few ms. main.ts builds one while the app's chunk is still loading, so that
// cost is not paid when the first timeline rows are formatted.

/** Builds and uses a throwaway date formatter for locale; safe to call more than once. */
export function warmDateFormatting(locale: string | undefined): void {
  try {
    new Intl.DateTimeFormat(locale, { hour: '2-digit', minute: '2-digit', second: '2-digit' }).format(0);
  } catch {
    // Intl missing or broken: the formatters report it where they are used.
  }
}
