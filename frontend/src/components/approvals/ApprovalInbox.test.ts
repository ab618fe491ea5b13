import { render, screen } from '@testing-library/svelte';
import { describe, expect, it } from 'vitest';
import { shellRequest } from '../../lib/testdata/approvals';
import { m, setLocale } from '../../lib/i18n';
import ApprovalInbox from './ApprovalInbox.svelte';

describe('ApprovalInbox', () => {
  it("titles each waiting approval in the reader's language when the request carries its title as a message key", async () => {
    await setLocale('zh-CN');
    try {
      render(ApprovalInbox, {
        pending: [
          { ...shellRequest, title: 'Run git status --short', titleMessage: { key: 'title_run', args: { command: 'git status --short' } } },
        ],
        now: Date.now(),
        runTask: () => 'task',
        onOpen: () => {},
      });
      const zh = m.title_run({ command: 'git status --short' }, { locale: 'zh-CN' });
      expect(zh).not.toBe('Run git status --short');
      expect(screen.getByText(zh)).toBeInTheDocument();
    } finally {
      await setLocale('en');
    }
  });
});
