// What the virtual timeline needs to know about rows before they render:
// an estimated height per kind (close estimates keep the scrollbar honest
// and the first measurement small), and the end row's summary.
import type { AppliedFile, Item } from './model';

/** Estimated height in px of a row before it is measured. */
export function estimateHeight(item: Item | undefined): number {
  switch (item?.kind) {
    case 'message': {
      // Header plus wrapped text, about 95 characters a line at 920 px.
      const lines = item.text.split('\n').reduce((n, l) => n + Math.max(1, Math.ceil(l.length / 95)), 0);
      return 50 + Math.min(lines, 400) * 21;
    }
    case 'tool':
      // A running call is open with its output; an approval sits inside.
      return 40 + (item.result ? 0 : 160) + (item.approval ? 66 : 0);
    case 'approval':
      return 62;
    case 'patch':
      return 58;
    case 'end':
      return 190;
    default:
      return 22;
  }
}

/** The files a run changed and how its approvals went, for the end row. */
export function endSummary(items: readonly Item[]): { files: AppliedFile[]; decisions: { approved: number; rejected: number } } {
  const files: AppliedFile[] = [];
  let approved = 0;
  let rejected = 0;
  for (const i of items) {
    if (i.kind === 'patch') files.push(...i.files);
    const appr = i.kind === 'approval' ? i : i.kind === 'tool' ? i.approval : undefined;
    if (appr?.resolved) {
      if (appr.resolved.decision.startsWith('reject')) rejected++;
      else approved++;
    }
  }
  return { files, decisions: { approved, rejected } };
}
