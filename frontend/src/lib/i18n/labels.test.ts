import { describe, expect, it } from 'vitest';
import { formatDate, formatDateTime, formatRelative, setLocale } from './index';

describe('date formatting', () => {
  it('follows the current locale (the formatters are kept per locale)', () => {
    const iso = '2026-01-01T13:05:09.000Z';
    const d = new Date(iso);
    const now = d.getTime() + 3 * 3_600_000;
    const want = (l: string) => ({
      dateTime: new Intl.DateTimeFormat(l, { dateStyle: 'medium', timeStyle: 'medium' }).format(d),
      date: new Intl.DateTimeFormat(l, { year: 'numeric', month: 'short', day: 'numeric' }).format(d),
      relative: new Intl.RelativeTimeFormat(l, { numeric: 'auto' }).format(-3, 'hour'),
    });
    const got = () => ({ dateTime: formatDateTime(iso), date: formatDate(iso), relative: formatRelative(iso, now) });
    for (const l of ['en', 'zh-CN', 'en'] as const) {
      setLocale(l);
      expect(got(), l).toEqual(want(l));
    }
    expect(want('zh-CN')).not.toEqual(want('en'));
    expect(formatDateTime('not a time')).toBe('not a time');
  });
});
