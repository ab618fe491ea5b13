import { describe, expect, it } from 'vitest';
import { flushSync } from 'svelte';
import { langOf, paint, tokenizer, type Tok } from './index';
import { CHUNK, DiffColors } from './diff.svelte';
import { parseUnified } from '../diff/unified';

describe('paint: syntax tokens merged with word highlights', () => {
  const toks: Tok[] = [
    { content: 'const', light: '#d73a49', dark: '#f97583' },
    { content: ' x ', light: '#24292e' },
    { content: '=', light: '#d73a49' },
    { content: ' 22', light: '#005cc5' },
  ];

  it('cuts at both boundaries and keeps the text exactly', () => {
    const pieces = paint('const x = 22', toks, [{ start: 4, end: 7 }]);
    expect(pieces.map((p) => p.text).join('')).toBe('const x = 22');
    expect(pieces.map((p) => [p.text, p.changed, p.light ?? null])).toEqual([
      ['cons', false, '#d73a49'],
      ['t', true, '#d73a49'],
      [' x', true, '#24292e'],
      [' ', false, '#24292e'],
      ['=', false, '#d73a49'],
      [' 22', false, '#005cc5'],
    ]);
    expect(pieces[0]!.dark).toBe('#f97583');
  });

  it('works with spans alone, tokens alone, and neither', () => {
    expect(paint('x := 22', null, [{ start: 5, end: 7 }])).toEqual([
      { text: 'x := ', changed: false },
      { text: '22', changed: true },
    ]);
    expect(paint('abc', [{ content: 'abc', light: '#111' }], null)).toEqual([{ text: 'abc', changed: false, light: '#111' }]);
    expect(paint('', null, null)).toEqual([{ text: '', changed: false }]);
  });

  it('ignores tokens that do not match the text, and clamps spans', () => {
    const pieces = paint('abcdef', [{ content: 'abc', light: '#1' }, { content: 'XYZ', light: '#2' }], [{ start: 5, end: 99 }]);
    expect(pieces).toEqual([
      { text: 'abc', changed: false, light: '#1' },
      { text: 'de', changed: false },
      { text: 'f', changed: true },
    ]);
  });
});

describe('shiki, lazily loaded', () => {
  it('maps paths to the grammars we ship', () => {
    expect(['a/b.ts', 'x.tsx', 'main.go', 'Makefile', 'a.PY', 'notes.txt', 'noext'].map(langOf)).toEqual([
      'typescript',
      'tsx',
      'go',
      'shellscript',
      'python',
      null,
      null,
    ]);
  });

  it('tokenises with both themes', async () => {
    const tok = await tokenizer('typescript');
    expect(tok).not.toBeNull();
    const lines = tok!.tokenize('const x = "s";\n// note', 'typescript');
    expect(lines).toHaveLength(2);
    expect(lines[0]!.map((t) => t.content).join('')).toBe('const x = "s";');
    const kw = lines[0]!.find((t) => t.content.includes('const'))!;
    const str = lines[0]!.find((t) => t.content.includes('"'))!;
    expect(kw.light).toMatch(/^#/);
    expect(kw.dark).toMatch(/^#/);
    expect(kw.light).not.toBe(kw.dark);
    expect(kw.light).not.toBe(str.light);
  }, 20_000);
});

describe('DiffColors', () => {
  const wait = () => new Promise((r) => setTimeout(r, 5));
  // Polls until cond holds, with a deadline a loaded machine cannot hit
  // (a fixed number of 5 ms turns could run out before the tokeniser ran).
  const until = async (cond: () => boolean) => {
    for (const deadline = Date.now() + 30_000; !cond() && Date.now() < deadline; ) await wait();
  };

  it('tokenises a chunk on first read, old side for deletions, new side otherwise', async () => {
    const [f] = parseUnified('--- a/a.ts\n+++ b/a.ts\n@@ -1,2 +1,2 @@\n const a = 1;\n-let b = 2;\n+var b = 3;\n');
    const seen: string[] = [];
    const colors = new DiffColors([f!], async () => ({
      tokenize: (code) => {
        seen.push(code);
        return code.split('\n').map((l) => [{ content: l, light: `#${l.length}` }]);
      },
    }));
    expect(colors.lang(0)).toBe('typescript');
    expect(colors.line(0, 0, 1)).toBeUndefined();
    expect(colors.line(0, 0, 2)).toBeUndefined();
    await until(() => seen.length >= 2);
    flushSync();
    expect(seen.sort()).toEqual(['const a = 1;\nlet b = 2;', 'const a = 1;\nvar b = 3;']);
    expect(colors.line(0, 0, 1)).toEqual([{ content: 'let b = 2;', light: '#10' }]);
    expect(colors.line(0, 0, 2)).toEqual([{ content: 'var b = 3;', light: '#10' }]);
    expect(colors.line(0, 0, 0)).toEqual([{ content: 'const a = 1;', light: '#12' }]);
  });

  it('splits long hunks into chunks and tokenises only the chunks asked for', async () => {
    const n = CHUNK * 3;
    const body = Array.from({ length: n }, (_, i) => `+line ${i}`).join('\n');
    const [f] = parseUnified(`--- /dev/null\n+++ b/big.go\n@@ -0,0 +1,${n} @@\n${body}\n`);
    let calls = 0;
    const colors = new DiffColors([f!], async () => ({
      tokenize: (code) => {
        calls++;
        return code.split('\n').map((l) => [{ content: l }]);
      },
    }));
    colors.line(0, 0, CHUNK * 2 + 5);
    await until(() => calls > 0);
    expect(calls).toBe(1);
    expect(colors.line(0, 0, CHUNK * 2 + 5)).toEqual([{ content: `line ${CHUNK * 2 + 5}` }]);
    expect(colors.line(0, 0, 0)).toBeUndefined();
  });

  it('leaves files without a grammar plain and asks for nothing', () => {
    const [f] = parseUnified('--- a/notes.txt\n+++ b/notes.txt\n@@ -1 +1 @@\n-a\n+b\n');
    const colors = new DiffColors([f!], () => {
      throw new Error('must not load');
    });
    expect(colors.line(0, 0, 0)).toBeUndefined();
  });
});
