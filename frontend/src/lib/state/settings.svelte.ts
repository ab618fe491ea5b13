// Settings state: theme and language, loaded from and saved through
// SettingsAPI. Changes apply instantly (optimistic) and are reverted if the
// save fails. The last applied choice is also remembered in localStorage so
// the next start paints in the right theme and language before the API
// answers (no flash, no jump).
import { toApiError, type Api, type ApiError, type Locale, type Settings, type Theme, THEMES, LOCALES } from '../api';
import { setLocale } from '../i18n';

export const REMEMBER_KEY = 'agenthub.display';

export interface DisplayHost {
  /** Receives the resolved theme ("light" | "dark") and the user's choice. */
  applyTheme(resolved: 'light' | 'dark', choice: Theme): void;
  /** The system preference, or null when the platform cannot say. */
  systemDark(): boolean | null;
  /** Calls cb when the system preference changes; returns the unsubscribe. */
  onSystemChange(cb: (dark: boolean) => void): () => void;
  storage: Pick<Storage, 'getItem' | 'setItem'> | null;
}

export function browserHost(): DisplayHost {
  const media = typeof matchMedia === 'function' ? matchMedia('(prefers-color-scheme: dark)') : null;
  let storage: Storage | null = null;
  try {
    storage = localStorage;
  } catch {
    storage = null; // storage can be disabled; remembering is only a nicety
  }
  return {
    applyTheme(resolved, choice) {
      const root = document.documentElement;
      root.dataset.theme = resolved;
      root.dataset.themeChoice = choice;
      root.style.colorScheme = resolved;
    },
    systemDark: () => (media ? media.matches : null),
    onSystemChange(cb) {
      if (!media) return () => {};
      const h = (e: MediaQueryListEvent) => cb(e.matches);
      media.addEventListener('change', h);
      return () => media.removeEventListener('change', h);
    },
    storage,
  };
}

function parse(raw: string | null): Partial<Settings> {
  if (!raw) return {};
  try {
    const v = JSON.parse(raw) as Partial<Settings>;
    return {
      theme: THEMES.includes(v.theme as Theme) ? v.theme : undefined,
      language: LOCALES.includes(v.language as Locale) ? v.language : undefined,
    };
  } catch {
    return {};
  }
}

// Storage that throws on read (a SecurityError when the browser blocks it
// for this origin) is storage with nothing remembered: never a failed start.
function readRemembered(host: DisplayHost): string | null {
  try {
    return host.storage?.getItem(REMEMBER_KEY) ?? null;
  } catch {
    return null;
  }
}

export class SettingsState {
  theme = $state<Theme>('system');
  language = $state<Locale>('en');
  status = $state<'loading' | 'ready' | 'error'>('loading');
  error = $state<ApiError | null>(null);
  systemDark = $state(false);
  resolvedTheme = $derived<'light' | 'dark'>(
    this.theme === 'system' ? (this.systemDark ? 'dark' : 'light') : this.theme,
  );

  #api: Pick<Api, 'settings'>;
  #host: DisplayHost;
  #saved: Settings = { theme: 'system', language: 'en' };
  #queue: Promise<unknown> = Promise.resolve();
  #stopSystem: () => void;

  constructor(api: Pick<Api, 'settings'>, host: DisplayHost = browserHost()) {
    this.#api = api;
    this.#host = host;
    this.systemDark = host.systemDark() ?? false;
    const remembered = parse(readRemembered(host));
    this.theme = remembered.theme ?? this.theme;
    this.language = remembered.language ?? this.language;
    this.#stopSystem = host.onSystemChange((dark) => {
      this.systemDark = dark;
      this.#apply();
    });
    this.#apply();
  }

  async load(): Promise<void> {
    this.status = 'loading';
    try {
      const s = await this.#api.settings.get();
      this.#saved = s;
      this.theme = s.theme;
      this.language = s.language;
      this.error = null;
      this.status = 'ready';
    } catch (err) {
      this.error = toApiError(err);
      this.status = 'error';
    }
    this.#apply();
  }

  setTheme(theme: Theme): Promise<void> {
    return this.#change({ theme, language: this.language });
  }

  setLanguage(language: Locale): Promise<void> {
    return this.#change({ theme: this.theme, language });
  }

  dispose(): void {
    this.#stopSystem();
  }

  #change(next: Settings): Promise<void> {
    this.theme = next.theme;
    this.language = next.language;
    this.#apply();
    // Saves run one after another so the last choice is the one stored.
    const run = this.#queue.then(async () => {
      try {
        this.#saved = await this.#api.settings.set(next);
        this.error = null;
      } catch (err) {
        this.error = toApiError(err);
        if (this.theme === next.theme && this.language === next.language) {
          this.theme = this.#saved.theme;
          this.language = this.#saved.language;
          this.#apply();
        }
      }
    });
    this.#queue = run;
    return run;
  }

  #apply(): void {
    this.#host.applyTheme(this.resolvedTheme, this.theme);
    setLocale(this.language);
    try {
      this.#host.storage?.setItem(REMEMBER_KEY, JSON.stringify({ theme: this.theme, language: this.language }));
    } catch {
      // quota or privacy mode: the API remains the source of truth
    }
  }
}
