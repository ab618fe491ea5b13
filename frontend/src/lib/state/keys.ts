// Every action key of the app, by where it works: the help overlay (?) lists
// exactly this table, and App's key handler and the views' handlers use the
// same keys (a test checks that each global key here is handled).
import { m } from '../i18n';

export interface KeyHelp {
  /** The keys as shown, e.g. ['Ctrl', 'K'] or ['J', '↓']: alternatives are separate entries of `alt`. */
  keys: string[];
  alt?: string[];
  label: () => string;
}

export interface KeyScope {
  id: 'global' | 'run' | 'inbox' | 'dialog';
  title: () => string;
  keys: KeyHelp[];
}

/** The single-key shortcuts App handles anywhere outside a text box and a dialog. */
export const GLOBAL_KEYS = {
  help: '?',
  sidebar: '[',
  home: 'h',
  newRun: 'n',
  inbox: 'i',
  audit: 't',
  settings: 's',
  review: 'v',
} as const;

export const KEYMAP: readonly KeyScope[] = [
  {
    id: 'global',
    title: () => m.help_scope_global(),
    keys: [
      { keys: ['?'], label: () => m.help_key_help() },
      { keys: ['Ctrl', 'K'], alt: ['⌘', 'K'], label: () => m.help_key_search() },
      { keys: ['['], label: () => m.help_key_sidebar() },
      { keys: ['H'], label: () => m.help_key_home() },
      { keys: ['N'], label: () => m.help_key_new() },
      { keys: ['I'], label: () => m.help_key_inbox() },
      { keys: ['T'], label: () => m.help_key_audit() },
      { keys: ['S'], label: () => m.help_key_settings() },
    ],
  },
  {
    id: 'run',
    title: () => m.help_scope_run(),
    keys: [{ keys: ['V'], label: () => m.help_key_review() }],
  },
  {
    id: 'inbox',
    title: () => m.help_scope_inbox(),
    keys: [
      { keys: ['J'], alt: ['↓'], label: () => m.help_key_move() },
      { keys: ['K'], alt: ['↑'], label: () => m.help_key_move() },
      { keys: ['Home'], alt: ['End'], label: () => m.help_key_first_last() },
    ],
  },
  {
    id: 'dialog',
    title: () => m.help_scope_dialog(),
    keys: [
      { keys: ['A'], label: () => m.help_key_approve() },
      { keys: ['R'], label: () => m.help_key_reject() },
      { keys: ['N'], alt: ['P'], label: () => m.help_key_hunks() },
      { keys: ['J'], alt: ['K'], label: () => m.help_key_hunks() },
      { keys: ['Space'], label: () => m.help_key_toggle_hunk() },
      { keys: ['L'], label: () => m.help_key_lines() },
      { keys: ['Esc'], label: () => m.help_key_close() },
    ],
  },
];

/** True when a key press is typing into a field, not a shortcut. */
export function typing(target: EventTarget | null): boolean {
  const t = target as HTMLElement | null;
  return !!t && (t.isContentEditable || ['INPUT', 'TEXTAREA', 'SELECT'].includes(t.tagName));
}
