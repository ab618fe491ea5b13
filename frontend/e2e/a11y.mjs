// Accessibility checks for the end-to-end tests: axe-core (the pinned npm
// package) injected into the page under test, WCAG 2.x A/AA rules plus axe's
// best practices. A check fails on any serious or critical violation and
// names each one with the elements it found, so the report says what to fix.
import { createRequire } from 'node:module';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

const require = createRequire(import.meta.url);
const AXE = require.resolve('axe-core/axe.min.js');
let source = '';

const TAGS = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'];
const BLOCKING = new Set(['serious', 'critical']);

/**
 * Runs axe on the page (or on the element matched by `include`) and returns
 * the serious and critical violations, formatted one per line.
 */
export async function axeViolations(page, { include } = {}) {
  // Evaluated over the DevTools protocol rather than added as a script tag:
  // the page's Content-Security-Policy (default-src 'self') rightly refuses
  // inline scripts, and the check must not weaken it.
  if (!(await page.evaluate(() => typeof window.axe === 'object'))) {
    source ||= await readFile(AXE, 'utf8');
    await page.evaluate(source);
  }
  const result = await page.evaluate(
    async ({ include, tags }) => {
      const context = include ? { include: [include] } : document;
      const r = await window.axe.run(context, { runOnly: { type: 'tag', values: tags }, resultTypes: ['violations'] });
      return r.violations.map((v) => ({
        id: v.id,
        impact: v.impact,
        help: v.help,
        nodes: v.nodes.map((n) => ({ target: n.target.join(' '), summary: n.failureSummary })),
      }));
    },
    { include, tags: TAGS },
  );
  return result.filter((v) => BLOCKING.has(v.impact));
}

/** Formats violations for an assertion message. */
export function describeViolations(list) {
  return list
    .map((v) => `${v.impact} ${v.id}: ${v.help}\n${v.nodes.map((n) => `  at ${n.target}\n    ${n.summary?.replace(/\n/g, '\n    ')}`).join('\n')}`)
    .join('\n');
}

/**
 * Fails (through assert) on serious or critical violations; the report is
 * also written next to the screenshots as `a11y-<name>.json`.
 */
export async function checkA11y(assert, page, artifacts, name, opts) {
  const found = await axeViolations(page, opts);
  await writeFile(join(artifacts, `a11y-${name}.json`), JSON.stringify(found, null, 2));
  assert.deepEqual(found.map((v) => v.id), [], `axe found serious or critical violations on ${name}:\n${describeViolations(found)}`);
}
