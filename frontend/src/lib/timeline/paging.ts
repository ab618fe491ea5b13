// Page sizes of a timeline's history (plain constants: main.ts starts the
// first page before the app's chunk has loaded).

/**
 * The first page is small so the run shows quickly; the rest come in the
 * largest pages the API serves (5,000), so a 100,000-event run takes 20
 * round trips, not 100.
 */
export const FIRST_PAGE = 1000;
export const PAGE = 5000;
