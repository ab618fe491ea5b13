// Opens a search result at its event: once the run's timeline has rendered
// the event's row ([data-seq]), it is scrolled into view and marked for a
// moment. The timeline renders rows as they come into view, so a row far
// from the start may not exist yet; then the run stays open at its top.
export function revealEvent(seq: number, doc: Document = document, timeoutMs = 5000): Promise<boolean> {
  const t0 = Date.now();
  return new Promise((resolve) => {
    const look = () => {
      const row = doc.querySelector<HTMLElement>(`[data-seq="${seq}"]`);
      if (row) {
        row.scrollIntoView?.({ block: 'center' });
        row.dataset.found = 'true';
        setTimeout(() => delete row.dataset.found, 2000);
        resolve(true);
      } else if (Date.now() - t0 > timeoutMs) {
        resolve(false);
      } else {
        setTimeout(look, 50);
      }
    };
    look();
  });
}
