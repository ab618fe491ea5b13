// Issue 21: every stable code, walked through the notice in English and
// 中文. A code added in Go (generated FAILURE_CODES) without a title, a
// cause, a next step or an action in either catalogue fails here.
import { cleanup, fireEvent, render, screen } from '@testing-library/svelte';
import { afterEach, describe, expect, it, vi } from 'vitest';
import ErrorNotice from './ErrorNotice.svelte';
import en from '../../../messages/en.json';
import zh from '../../../messages/zh-CN.json';
import { CLIENT_CODES, FAILURE_CODES } from '../../lib/api';
import { ERROR_WORDS, setLocale } from '../../lib/i18n';

const catalogues: Record<string, Record<string, string>> = { en, 'zh-CN': zh };
const codes = [...FAILURE_CODES, ...Object.values(CLIENT_CODES)];
const han = /[\u4e00-\u9fff]/;

afterEach(() => {
  cleanup();
  setLocale('en');
  history.replaceState(null, '', '/');
});

describe('ErrorNotice', () => {
  it('knows every code: title, cause and next step in both catalogues, and an action', () => {
    for (const code of codes) {
      expect(ERROR_WORDS[code], `${code} has no words in lib/i18n/errors.ts`).toBeTruthy();
      for (const [lang, cat] of Object.entries(catalogues)) {
        for (const key of [`err_title_${code}`, `err_cause_${code}`, `next_${code}`]) {
          expect(cat[key], `${lang} ${key}`).toBeTruthy();
        }
      }
    }
  });

  it.each(['en', 'zh-CN'] as const)('renders every code in %s with its title, cause, next step and action', (locale) => {
    setLocale(locale);
    for (const code of codes) {
      const handlers = { onRetry: vi.fn(), onDismiss: vi.fn(), onChooseFolder: vi.fn(), onOpenSettings: vi.fn() };
      render(ErrorNotice, { error: { code, message: 'the safe message', next: 'sent next' }, ...handlers });
      const notice = screen.getByTestId('error-notice');
      const title = screen.getByTestId('error-title').textContent ?? '';
      const cause = screen.getByTestId('error-cause').textContent ?? '';
      const next = screen.getByTestId('error-next').textContent ?? '';
      expect(title, code).not.toBe('');
      expect(title, code).not.toContain(code);
      expect(cause, code).not.toBe('');
      // The localised step, not what the server sent (it is not specific).
      expect(next, code).not.toContain('sent next');
      if (locale === 'zh-CN') {
        expect(title, `${code} title in 中文`).toMatch(han);
        expect(cause, `${code} cause in 中文`).toMatch(han);
        expect(next, `${code} next step in 中文`).toMatch(han);
      }
      const action = screen.getByTestId('error-action');
      expect(action.textContent?.trim(), code).not.toBe('');
      expect(notice.dataset.action, code).toBe(ERROR_WORDS[code]!.action);
      // The server's safe message as details; the client's own codes say it in the title and cause.
      if (!(Object.values(CLIENT_CODES) as string[]).includes(code)) {
        expect(screen.getByTestId('error-message')).toHaveTextContent('the safe message');
      }
      cleanup();
    }
  });

  it('runs the action: Open Settings goes to the settings page, Choose another folder and Retry call back', async () => {
    render(ErrorNotice, { error: { code: 'permission_denied', message: 'denied', next: '' } });
    await fireEvent.click(screen.getByTestId('error-action'));
    expect(location.hash).toBe('#/settings');
    cleanup();

    const onChooseFolder = vi.fn();
    render(ErrorNotice, { error: { code: 'workspace_exists', message: 'workspace ~/x is already in the allowlist', next: '' }, onChooseFolder });
    expect(screen.getByTestId('error-action')).toHaveTextContent('Choose another folder');
    expect(screen.getByTestId('error-title')).toHaveTextContent('This folder is already a workspace');
    await fireEvent.click(screen.getByTestId('error-action'));
    expect(onChooseFolder).toHaveBeenCalledOnce();
    cleanup();

    const onRetry = vi.fn();
    render(ErrorNotice, { error: { code: 'engine_unavailable', message: 'gone', next: '' }, onRetry });
    await fireEvent.click(screen.getByTestId('error-action'));
    expect(onRetry).toHaveBeenCalledOnce();
  });

  it('offers no button it cannot run', () => {
    render(ErrorNotice, { error: { code: 'workspace_exists', message: 'x', next: '' } });
    expect(screen.queryByTestId('error-action')).toBeNull();
  });

  it('copies a specific install command', async () => {
    const writeText = vi.fn(async () => {});
    vi.stubGlobal('navigator', { ...navigator, clipboard: { writeText } });
    const next = 'npm install -g @google/gemini-cli@0.61.0';
    render(ErrorNotice, { error: { code: 'runtime_unavailable', message: 'gemini is not installed', next, nextSpecific: true } });
    expect(screen.getByTestId('error-next')).toHaveTextContent(next);
    await fireEvent.click(screen.getByTestId('error-action'));
    expect(writeText).toHaveBeenCalledWith(next);
    expect(await screen.findByText('Install command copied')).toBeTruthy();
    vi.unstubAllGlobals();
  });

  it('shows text between backticks as code, never the raw backticks', () => {
    render(ErrorNotice, {
      error: { code: 'unauthorized', message: 'open the URL `agenthub serve` printed', next: 'run `agenthub serve` again', nextSpecific: true },
    });
    const notice = screen.getByTestId('error-notice');
    expect(notice.textContent).not.toContain('`');
    const codes = [...notice.querySelectorAll('code.inline')].map((c) => c.textContent);
    // The cause's, the message's and the next step's.
    expect(codes).toEqual(['agenthub serve', 'agenthub serve', 'agenthub serve']);
  });

  it('a playbook expectation is headlined as the playbook, not as unreadable runtime output', () => {
    render(ErrorNotice, { error: { code: 'playbook_expectation_failed', message: 'playbook step 2: expected "ok"', next: '' } });
    expect(screen.getByTestId('error-title')).toHaveTextContent("A playbook step's expectation was not met");
    expect(screen.getByTestId('error-title').textContent).not.toMatch(/cannot read/);
  });

  it('an unreachable local model server is told to start the server, in 中文 too, never to check the CLI', () => {
    const next = 'Start the model server (Ollama: ollama serve; LM Studio: start its local server) or correct base_url in the profile, then try again.';
    const error = { code: 'runtime_unavailable', message: 'The model server could not be reached.', next, nextSpecific: true };
    render(ErrorNotice, { error });
    expect(screen.getByTestId('error-next')).toHaveTextContent('ollama serve');
    expect(screen.getByTestId('error-next').textContent).not.toMatch(/CLI/);
    cleanup();
    setLocale('zh-CN');
    render(ErrorNotice, { error });
    expect(screen.getByTestId('error-next')).toHaveTextContent('启动模型服务器');
  });
});
