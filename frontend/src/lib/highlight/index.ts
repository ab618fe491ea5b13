// Syntax highlighting for the diff viewer with shiki, loaded lazily: the
// core, the JavaScript regex engine (no WASM) and two themes (one light, one
// dark) come in one chunk on first use, and each grammar in its own chunk
// only when a file of that language is shown. Tokens carry both themes'
// colours, so switching theme only swaps a CSS variable: no re-tokenising,
// no layout change.
import { paint, type Piece, type Tok } from './paint';

export { paint, type Piece, type Tok };

/** The grammars we ship, by shiki id, each a lazy chunk. */
const GRAMMARS = {
  typescript: () => import('@shikijs/langs/typescript'),
  tsx: () => import('@shikijs/langs/tsx'),
  javascript: () => import('@shikijs/langs/javascript'),
  jsx: () => import('@shikijs/langs/jsx'),
  json: () => import('@shikijs/langs/json'),
  go: () => import('@shikijs/langs/go'),
  python: () => import('@shikijs/langs/python'),
  rust: () => import('@shikijs/langs/rust'),
  shellscript: () => import('@shikijs/langs/shellscript'),
  yaml: () => import('@shikijs/langs/yaml'),
  toml: () => import('@shikijs/langs/toml'),
  css: () => import('@shikijs/langs/css'),
  markdown: () => import('@shikijs/langs/markdown'),
} as const;

export type Lang = keyof typeof GRAMMARS;

const BY_EXT: Record<string, Lang> = {
  ts: 'typescript',
  mts: 'typescript',
  cts: 'typescript',
  tsx: 'tsx',
  js: 'javascript',
  mjs: 'javascript',
  cjs: 'javascript',
  jsx: 'jsx',
  json: 'json',
  jsonc: 'json',
  go: 'go',
  py: 'python',
  rs: 'rust',
  sh: 'shellscript',
  bash: 'shellscript',
  zsh: 'shellscript',
  yml: 'yaml',
  yaml: 'yaml',
  toml: 'toml',
  css: 'css',
  md: 'markdown',
  markdown: 'markdown',
};

const BY_NAME: Record<string, Lang> = { Makefile: 'shellscript', Dockerfile: 'shellscript', '.bashrc': 'shellscript', '.zshrc': 'shellscript' };

/** The grammar for a path, by file name or extension; null when we ship none. */
export function langOf(path: string): Lang | null {
  const name = path.split('/').pop() ?? '';
  if (BY_NAME[name]) return BY_NAME[name]!;
  const dot = name.lastIndexOf('.');
  if (dot < 0) return null;
  return BY_EXT[name.slice(dot + 1).toLowerCase()] ?? null;
}

export const THEMES = { light: 'github-light', dark: 'github-dark' } as const;

/** Lines longer than this are shown plain (tokenising them costs too much). */
export const MAX_LINE = 2000;
/**
 * Per-line time limit. shiki's default (500 ms) cuts a line short while the
 * grammar's regexes are still being compiled on first use on a busy machine,
 * leaving the rest of the line in one wrong colour; lines are short here.
 */
const LINE_MS = 5000;

export interface Tokenizer {
  /** One token list per line of code (lines split on "\n"). */
  tokenize(code: string, lang: Lang): Tok[][];
}

type Core = Awaited<ReturnType<typeof import('@shikijs/core').createHighlighterCore>>;

let core: Promise<Core> | null = null;
const loaded = new Map<Lang, Promise<void>>();

async function createCore(): Promise<Core> {
  const [{ createHighlighterCore }, { createJavaScriptRegexEngine }, light, dark] = await Promise.all([
    import('@shikijs/core'),
    import('@shikijs/engine-javascript'),
    import('@shikijs/themes/github-light'),
    import('@shikijs/themes/github-dark'),
  ]);
  return createHighlighterCore({ themes: [light.default, dark.default], langs: [], engine: createJavaScriptRegexEngine({ forgiving: true }) });
}

/** Loads shiki and the grammar for lang (once each); null if loading failed. */
export async function tokenizer(lang: Lang): Promise<Tokenizer | null> {
  try {
    core ??= createCore();
    const hl = await core;
    let ready = loaded.get(lang);
    if (!ready) {
      ready = GRAMMARS[lang]().then((g) => hl.loadLanguage(...g.default));
      loaded.set(lang, ready);
    }
    await ready;
    return {
      tokenize(code, l) {
        const lines = hl.codeToTokensWithThemes(code, { lang: l, themes: THEMES, tokenizeMaxLineLength: MAX_LINE, tokenizeTimeLimit: LINE_MS });
        return lines.map((line) =>
          line.map((t) => ({ content: t.content, light: t.variants.light?.color, dark: t.variants.dark?.color, style: t.variants.light?.fontStyle })),
        );
      },
    };
  } catch {
    // Highlighting is decoration: without it the diff is still complete.
    core = null;
    loaded.delete(lang);
    return null;
  }
}
