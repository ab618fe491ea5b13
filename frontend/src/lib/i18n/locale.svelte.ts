// The current UI locale as a rune. Paraglide's message functions read the
// locale through getLocale(); overwriting it with a rune read makes every
// `m.key()` in a template reactive, so switching language re-renders the
// strings in place without remounting anything (the timeline and its scroll
// position survive).
import { baseLocale, overwriteGetLocale, overwriteSetLocale } from '../paraglide/runtime.js';
import type { Locale } from '../api';

let current = $state<Locale>(baseLocale);

overwriteGetLocale(() => current);
// Paraglide's own setLocale reloads the page by default; route it here.
overwriteSetLocale((next) => setLocale(next as Locale));

export function getLocale(): Locale {
  return current;
}

export function setLocale(next: Locale): void {
  current = next;
  if (typeof document !== 'undefined') document.documentElement.lang = next;
}
