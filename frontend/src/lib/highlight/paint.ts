// Merges syntax tokens with intra-line change spans into the pieces one line
// is drawn with. Both cut the same text at their own boundaries; the result
// is cut at every boundary of either, so a word highlight and a token colour
// never hide each other and the text is preserved exactly.

/** A syntax token: its text and its colour in each theme. */
export interface Tok {
  content: string;
  light?: string;
  dark?: string;
  /** shiki FontStyle bits: 1 italic, 2 bold, 4 underline. */
  style?: number;
}

export interface Piece {
  text: string;
  changed: boolean;
  light?: string;
  dark?: string;
  style?: number;
}

type Span = { start: number; end: number };

/**
 * Cuts text into pieces by tokens (may be absent, or not cover the text:
 * the rest is plain) and changed spans (UTF-16 offsets, end exclusive).
 */
export function paint(text: string, toks: readonly Tok[] | null | undefined, spans: readonly Span[] | null | undefined): Piece[] {
  const cuts = new Set<number>([0, text.length]);
  const ranges = (spans ?? [])
    .map((s) => ({ start: Math.max(0, Math.min(s.start, text.length)), end: Math.max(0, Math.min(s.end, text.length)) }))
    .filter((s) => s.end > s.start)
    .sort((a, b) => a.start - b.start);
  for (const s of ranges) {
    cuts.add(s.start);
    cuts.add(s.end);
  }
  // Tokens apply only while their text matches the line (a stale or cut token list is ignored past the mismatch).
  const tokAt: { start: number; end: number; tok: Tok }[] = [];
  let at = 0;
  for (const t of toks ?? []) {
    if (!t.content) continue;
    if (text.startsWith(t.content, at)) {
      tokAt.push({ start: at, end: at + t.content.length, tok: t });
      cuts.add(at);
      at += t.content.length;
      cuts.add(at);
    } else break;
  }
  const points = [...cuts].sort((a, b) => a - b);
  const out: Piece[] = [];
  let ti = 0;
  let si = 0;
  for (let i = 0; i + 1 < points.length; i++) {
    const start = points[i]!;
    const end = points[i + 1]!;
    if (end <= start) continue;
    while (ti < tokAt.length && tokAt[ti]!.end <= start) ti++;
    while (si < ranges.length && ranges[si]!.end <= start) si++;
    const tok = ti < tokAt.length && tokAt[ti]!.start <= start ? tokAt[ti]!.tok : undefined;
    const changed = si < ranges.length && ranges[si]!.start <= start;
    const piece: Piece = { text: text.slice(start, end), changed };
    if (tok?.light) piece.light = tok.light;
    if (tok?.dark) piece.dark = tok.dark;
    if (tok?.style) piece.style = tok.style;
    const prev = out.at(-1);
    // Join neighbours that look the same, to keep the DOM small.
    if (prev && prev.changed === piece.changed && prev.light === piece.light && prev.dark === piece.dark && prev.style === piece.style) {
      prev.text += piece.text;
    } else out.push(piece);
  }
  if (out.length === 0) out.push({ text: '', changed: false });
  return out;
}
