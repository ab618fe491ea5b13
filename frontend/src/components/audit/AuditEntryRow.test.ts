// An audit entry that names its event (issue 19: decisions and requests do)
// opens its run at that event; one without opens the run.
import { fireEvent, render, screen } from '@testing-library/svelte';
import { describe, expect, it, vi } from 'vitest';
import AuditEntryRow from './AuditEntryRow.svelte';

const entry = (data: Record<string, unknown>) => ({
  seq: 3,
  at: '2026-11-25T07:00:00.000Z',
  actor: 'me',
  surface: 'cli' as const,
  kind: 'approval.resolved',
  runId: 'run_1',
  data,
  prevHash: 'p',
  hash: 'h',
});

describe('AuditEntryRow', () => {
  it('opens the run at the entry’s event', async () => {
    const onOpenRun = vi.fn();
    render(AuditEntryRow, { props: { entry: entry({ event: 7, reason: 'only the import block' }), broken: false, runTask: () => 't', onOpenRun } });
    expect(screen.getByTestId('audit-event')).toHaveTextContent('#7');
    await fireEvent.click(screen.getByTestId('audit-open-run'));
    expect(onOpenRun).toHaveBeenCalledWith('run_1', 7);
  });

  it('opens the run when the entry names no event', async () => {
    const onOpenRun = vi.fn();
    render(AuditEntryRow, { props: { entry: entry({}), broken: false, runTask: () => 't', onOpenRun } });
    expect(screen.queryByTestId('audit-event')).toBeNull();
    await fireEvent.click(screen.getByTestId('audit-open-run'));
    expect(onOpenRun).toHaveBeenCalledWith('run_1', undefined);
  });
});
