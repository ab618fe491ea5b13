// Time of day for timeline rows, with the formatter cached per locale: a
// virtual list mounts rows all the time while scrolling, and building an
// Intl.DateTimeFormat costs far more than using one.
import { getLocale } from '../i18n';

const formats = new Map<string, Intl.DateTimeFormat>();

/** Time of day with seconds in the current locale; '' for a bad timestamp. */
export function clock(iso: string): string {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const locale = getLocale();
  let f = formats.get(locale);
  if (!f) {
    f = new Intl.DateTimeFormat(locale, { hour: '2-digit', minute: '2-digit', second: '2-digit' });
    formats.set(locale, f);
  }
  return f.format(d);
}
