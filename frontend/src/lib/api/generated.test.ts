// generated.ts is written from Go (app/apigen; its Go test fails when the
// file is stale). What the frontend adds to that vocabulary by hand, the
// localised catalogues, must cover it: a code or action kind added in Go
// shows up here as a missing message instead of as raw text in the UI.
import { describe, expect, it } from 'vitest';
import en from '../../../messages/en.json';
import zh from '../../../messages/zh-CN.json';
import { describeError, setLocale } from '../i18n';
import { ACTION_KINDS, COARSE, FAILURE_CODES, RECOVERY, RUN_STATES, TERMINAL_EVENTS, TERMINAL_STATES } from './generated';

const catalogues: Record<string, Record<string, string>> = { en, 'zh-CN': zh };

describe('the generated vocabulary', () => {
  it('every failure code has a localised next step, the English one as Go writes it', () => {
    for (const code of FAILURE_CODES) {
      expect((en as Record<string, string>)[`next_${code}`], code).toBe(RECOVERY[code]);
      for (const [lang, cat] of Object.entries(catalogues)) expect(cat[`next_${code}`], `${lang} next_${code}`).toBeTruthy();
    }
  });

  it('every failure code is shown with its localised next step, not the text the server sent', () => {
    setLocale('zh-CN');
    try {
      for (const code of FAILURE_CODES) {
        const shown = describeError({ code, message: 'm', next: 'sent by the server' }).next;
        expect(shown, code).toBe((zh as Record<string, string>)[`next_${code}`]);
      }
    } finally {
      setLocale('en');
    }
  });

  it('every action kind has a label in each language', () => {
    for (const kind of ACTION_KINDS) {
      for (const [lang, cat] of Object.entries(catalogues)) expect(cat[`kind_${kind}`], `${lang} kind_${kind}`).toBeTruthy();
    }
  });

  it('is self-consistent: done is exactly the terminal states, each reached by one terminal event', () => {
    for (const s of RUN_STATES) expect(COARSE[s] === 'done', s).toBe(TERMINAL_STATES.includes(s));
    expect(Object.values(TERMINAL_EVENTS).sort()).toEqual([...TERMINAL_STATES].sort());
  });
});
