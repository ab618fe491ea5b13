// A read started before the app asks for it: main.ts begins the first page of
// the run named in the address while the app's own chunk is still loading,
// and the timeline's first runs.events call for that page takes the answer
// (or the error) instead of asking again. Events are append-only, so a page
// read a moment early is the same page.
import type { Api } from './contract';
import type { RunEvent } from './types';

/** An Api whose first runs.events(runId, after, limit) is already in flight. */
export function prefetchEvents(api: Api, runId: string, after: number, limit: number): Api {
  let early: Promise<RunEvent[]> | null = api.runs.events(runId, after, limit);
  // Nobody may ever ask (the address changes first): do not report it unhandled.
  early.catch(() => {});
  const runs = api.runs;
  return {
    ...api,
    runs: {
      ...runs,
      events(id, a, n) {
        if (early && id === runId && a === after && n === limit) {
          const p = early;
          early = null;
          return p;
        }
        return runs.events(id, a, n);
      },
    },
  };
}
