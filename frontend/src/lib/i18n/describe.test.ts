import { describe, expect, it } from 'vitest';
import { ApiError } from '../api';
import { describeError, setLocale } from './index';
import { m } from '../paraglide/messages.js';

describe('describeError', () => {
  const install = 'npm install -g @google/gemini-cli@0.61.0';

  it.each([
    ['en', true, install],
    ['zh-CN', true, install],
    ['en', false, 'default'],
    ['zh-CN', false, 'default'],
  ] as const)('in %s, nextSpecific=%s picks the right next step', (locale, specific, want) => {
    setLocale(locale);
    const err = new ApiError({ code: 'runtime_unavailable', message: 'gemini is not installed', next: install, nextSpecific: specific });
    const next = describeError(err).next;
    expect(next).toBe(want === 'default' ? m.next_runtime_unavailable() : install);
    if (want === 'default') expect(next).not.toBe(install);
  });

  it('falls back to the sent step for a code without a localised one', () => {
    setLocale('en');
    expect(describeError(new ApiError({ code: 'some_future_code', message: 'x', next: 'do y' })).next).toBe('do y');
  });
});
