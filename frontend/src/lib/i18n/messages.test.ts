// @vitest-environment node
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

const read = (locale: string) =>
  JSON.parse(readFileSync(fileURLToPath(new URL(`../../../messages/${locale}.json`, import.meta.url)), 'utf8')) as Record<
    string,
    string
  >;

describe('messages', () => {
  const en = read('en');
  const zh = read('zh-CN');

  it('English and 中文 have the same keys', () => {
    expect(Object.keys(zh).sort()).toEqual(Object.keys(en).sort());
  });

  it('every message is translated and uses the same placeholders', () => {
    for (const key of Object.keys(en)) {
      if (key === '$schema') continue;
      expect(zh[key], key).toBeTruthy();
      const vars = (s: string) => [...s.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
      expect(vars(zh[key]!), key).toEqual(vars(en[key]!));
    }
  });

  it('has a localised next step for every backend failure code', () => {
    const codes = readFileSync(fileURLToPath(new URL('../../../../backend/failure.go', import.meta.url)), 'utf8')
      .matchAll(/FailureCode = "([a-z_]+)"/g);
    for (const [, code] of codes) expect(en[`next_${code}`], code).toBeTruthy();
  });
});
