import { describe, expect, it } from 'vitest';
import { clock } from './clock';
import { setLocale } from '../i18n';

describe('clock', () => {
  it('formats the time of day in the current locale, and nothing for a bad timestamp', () => {
    const iso = '2026-01-01T13:05:09.000Z';
    const want = (l: string) => new Intl.DateTimeFormat(l, { hour: '2-digit', minute: '2-digit', second: '2-digit' }).format(new Date(iso));
    setLocale('en');
    expect(clock(iso)).toBe(want('en'));
    setLocale('zh-CN');
    expect(clock(iso)).toBe(want('zh-CN'));
    expect(want('zh-CN')).not.toBe(want('en'));
    setLocale('en');
    expect(clock('not a time')).toBe('');
  });
});
