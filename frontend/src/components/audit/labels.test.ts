// Issue 21: the audit view's backend words in the reader's language: the
// engine's transition reasons and the rule entries, in English and 中文;
// a reason this build does not know is shown as recorded.
import { afterEach, describe, expect, it } from 'vitest';
import type { AuditEntry } from '../../lib/api';
import { setLocale } from '../../lib/i18n';
import { auditKindLabel, entrySummary, transitionReason } from './labels';

const entry = (kind: string, data: Record<string, unknown>): AuditEntry => ({
  seq: 1, at: '2026-11-25T09:00:00.000Z', actor: 'ada', surface: 'window', kind, data, prevHash: 'a', hash: 'b',
});

afterEach(() => setLocale('en'));

describe('audit words', () => {
  it.each([
    ['waiting for a decision', 'waiting for a decision', '等待决定'],
    ['gated actions finished', 'approved actions finished', '已批准的操作已完成'],
    ['3 gated actions', '3 approved actions', '3 个已批准的操作'],
    ['gated action call_9', 'approved action call_9', '已批准的操作 call_9'],
    ['re-enqueued after restart', 'queued again after a restart', '重启后重新排队'],
    ['something new', 'something new', 'something new'],
  ])('%s', (reason, en, zh) => {
    expect(transitionReason(reason)).toBe(en);
    setLocale('zh-CN');
    expect(transitionReason(reason)).toBe(zh);
  });

  it('names a revoked rule and its file', () => {
    setLocale('zh-CN');
    expect(auditKindLabel('policy.rule_revoked')).toBe('策略规则已撤销');
    expect(entrySummary(entry('policy.rule_revoked', { ruleId: 'always-shell-1', site: 'data', path: 'policy/ws_1.toml' }), () => undefined)).toBe(
      '规则 always-shell-1 · 数据目录：policy/ws_1.toml',
    );
    expect(entrySummary(entry('run.transition', { from: 'Running', to: 'NeedsApproval', reason: 'waiting for a decision' }), () => undefined)).toContain('等待决定');
  });
});
