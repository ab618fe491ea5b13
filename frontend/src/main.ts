// Entry point, kept small on purpose. The app itself (start.ts, which mounts
// App with mount(): new App() leaves the Wails window blank) is a chunk of its
// own, loaded from here. When the address names a run, the first page of its
// events is asked for before that chunk is parsed and the app boots (the
// timeline takes the answer when it asks for that page), and the first date
// formatter, slow to build (lib/i18n/warm.ts), is built while it loads.
// docs/PERFORMANCE.md, UI, has the figures.
import './app.css';
import { createApi, prefetchEvents } from './lib/api';
import { warmDateFormatting } from './lib/i18n/warm';
import { parseHash } from './lib/state/view';
import { FIRST_PAGE } from './lib/timeline/paging';

let api = createApi();
const view = parseHash(location.hash);
if (view.name === 'run') api = prefetchEvents(api, view.runId, 0, FIRST_PAGE);
void import('./start').then(({ start }) => start(api));
// Every timeline row shows a time: build the first formatter while the app's
// chunk loads, in the page's language (index.html's until settings apply theirs).
if (view.name === 'run') warmDateFormatting(document.documentElement.lang || undefined);
