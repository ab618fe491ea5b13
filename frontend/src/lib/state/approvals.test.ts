import { describe, expect, it } from 'vitest';
import { ApprovalsState } from './approvals.svelte';
import { patchRequest, shellRequest } from '../testdata/approvals';
import type { RunEvent } from '../api';

const requested = (payload: object, sequence: number): RunEvent =>
  ({ type: 'run.approval.requested', runId: patchRequest.runId, sequence, payload }) as unknown as RunEvent;

describe('ApprovalsState', () => {
  it('shows requests of one run asking for the same thing as one item', () => {
    const s = new ApprovalsState({ approvals: { list: async () => [], decide: async () => ({ outcome: 'accepted' }) } });
    const twin = { ...patchRequest, approvalId: 'apr_twin', toolCallId: 'call_twin' };
    const other = { ...shellRequest, runId: patchRequest.runId };
    s.applyEvents([requested(patchRequest, 1), requested(twin, 2), requested(other, 3), requested(twin, 4)]);
    expect(s.pending.map((a) => a.approvalId)).toEqual([patchRequest.approvalId, other.approvalId]);
    expect(s.pending[0]!.mergedApprovalIds).toEqual(['apr_twin']);
    // Another run's equal request is its own item.
    s.applyEvents([requested({ ...twin, approvalId: 'apr_elsewhere', runId: 'run_other' }, 5)]);
    expect(s.pending).toHaveLength(3);
  });
});
