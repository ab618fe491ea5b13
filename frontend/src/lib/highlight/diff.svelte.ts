// Syntax colours for the lines of a diff, computed lazily: a line asks for
// its tokens while it renders; the chunk of its hunk side (old for deleted
// lines, new for added and context lines) is queued, tokenised off the
// render path in small time slices, and every line of the chunk updates.
// Each chunk starts from a fresh grammar state, so a construct spanning a
// chunk edge may be coloured as plain code there: a fair price for never
// tokenising a 10,000-line file up front.
import { langOf, tokenizer, type Lang, type Tok, type Tokenizer } from './index';
import type { DiffFile } from '../diff/unified';

export const CHUNK = 100;
/** Time slice for tokenising before yielding to the page. */
const SLICE_MS = 12;

type Side = 'old' | 'new';

interface HunkSides {
  /** Position of each hunk line in its side's sequence. */
  pos: number[];
  old: string[];
  new: string[];
}

export class DiffColors {
  #rev = $state(0);
  #files: readonly DiffFile[];
  #langs: (Lang | null)[];
  #sides = new Map<string, HunkSides>();
  #cache = new Map<string, Tok[][]>();
  #queued = new Set<string>();
  #queue: { key: string; file: number; hunk: number; side: Side; chunk: number }[] = [];
  #timer: number | ReturnType<typeof setTimeout> | null = null;
  #tok = new Map<Lang, Promise<Tokenizer | null>>();
  #stopped = false;
  /** Tokeniser loader (tests pass their own). */
  #load: (lang: Lang) => Promise<Tokenizer | null>;

  constructor(files: readonly DiffFile[], load: (lang: Lang) => Promise<Tokenizer | null> = tokenizer) {
    this.#files = files;
    this.#langs = files.map((f) => langOf(f.path));
    this.#load = load;
  }

  /** The language of file i, for a label; null when not highlighted. */
  lang(file: number): Lang | null {
    return this.#langs[file] ?? null;
  }

  /**
   * Tokens of line `index` of a hunk, or undefined while they are not ready
   * (the line renders plain, then updates). Reading subscribes to updates.
   */
  line(file: number, hunk: number, index: number): Tok[] | undefined {
    void this.#rev;
    const lang = this.#langs[file];
    if (!lang || this.#stopped) return undefined;
    const h = this.#files[file]?.hunks[hunk];
    const l = h?.lines[index];
    if (!h || !l) return undefined;
    const side: Side = l.op === 'delete' ? 'old' : 'new';
    const sides = this.#hunkSides(file, hunk);
    const pos = sides.pos[index]!;
    const chunk = Math.floor(pos / CHUNK);
    const key = `${file}:${hunk}:${side}:${chunk}`;
    const toks = this.#cache.get(key);
    if (toks) return toks[pos - chunk * CHUNK];
    if (!this.#queued.has(key)) {
      this.#queued.add(key);
      this.#queue.push({ key, file, hunk, side, chunk });
      this.#schedule();
    }
    return undefined;
  }

  /** Stops pending work (the viewer went away). */
  stop(): void {
    this.#stopped = true;
    if (this.#timer !== null) {
      if (typeof cancelIdleCallback === 'function') cancelIdleCallback(this.#timer as number);
      clearTimeout(this.#timer as ReturnType<typeof setTimeout>);
    }
    this.#timer = null;
    this.#queue = [];
  }

  #hunkSides(file: number, hunk: number): HunkSides {
    const k = `${file}:${hunk}`;
    let s = this.#sides.get(k);
    if (!s) {
      s = { pos: [], old: [], new: [] };
      for (const l of this.#files[file]!.hunks[hunk]!.lines) {
        if (l.op === 'delete') {
          s.pos.push(s.old.length);
          s.old.push(l.text);
        } else {
          s.pos.push(s.new.length);
          s.new.push(l.text);
          if (l.op === 'context') s.old.push(l.text);
        }
      }
      this.#sides.set(k, s);
    }
    return s;
  }

  /** Runs the queue when the page is idle: the plain diff paints first, colours follow. */
  #schedule(): void {
    if (this.#timer !== null || this.#stopped) return;
    const run = () => {
      this.#timer = null;
      void this.#work();
    };
    this.#timer = typeof requestIdleCallback === 'function' ? requestIdleCallback(run, { timeout: 200 }) : setTimeout(run, 0);
  }

  async #work(): Promise<void> {
    const t0 = performance.now();
    let done = 0;
    while (this.#queue.length > 0 && !this.#stopped) {
      const job = this.#queue.shift()!;
      const lang = this.#langs[job.file]!;
      let load = this.#tok.get(lang);
      if (!load) {
        load = this.#load(lang);
        this.#tok.set(lang, load);
      }
      const tok = await load;
      if (this.#stopped) return;
      const lines = this.#hunkSides(job.file, job.hunk)[job.side].slice(job.chunk * CHUNK, (job.chunk + 1) * CHUNK);
      // Without a tokeniser the lines stay plain: cache the empty result.
      this.#cache.set(job.key, tok ? tok.tokenize(lines.join('\n'), lang) : []);
      done++;
      if (performance.now() - t0 > SLICE_MS) break;
    }
    if (done > 0 && !this.#stopped) this.#rev++;
    if (this.#queue.length > 0) this.#schedule();
  }
}
