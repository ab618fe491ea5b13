import { describe, expect, it } from 'vitest';
import { renderMarkdown } from '.';

describe('renderMarkdown', () => {
  it('renders Markdown', () => {
    const html = renderMarkdown('Run `git status` **now**:\n\n- one\n- two');
    expect(html).toContain('<code>git status</code>');
    expect(html).toContain('<strong>now</strong>');
    expect(html).toContain('<li>one</li>');
  });

  it('strips script elements and event-handler attributes', () => {
    const html = renderMarkdown('hi <script>alert(1)</script> <img src=x onerror="alert(2)"> <b onclick="alert(3)">b</b>');
    expect(html).not.toMatch(/<script/i);
    expect(html).not.toMatch(/onerror/i);
    expect(html).not.toMatch(/onclick/i);
    expect(html).not.toContain('alert(');
    expect(html).toContain('<b>b</b>');
  });

  it('drops javascript: links and makes links open safely outside', () => {
    const bad = renderMarkdown('[click](javascript:alert(1))');
    expect(bad).not.toMatch(/javascript:/i);
    const good = renderMarkdown('[docs](https://example.com/docs)');
    expect(good).toContain('href="https://example.com/docs"');
    expect(good).toContain('rel="noopener noreferrer"');
    expect(good).toContain('target="_blank"');
  });

  it('drops frames, forms and inline styles', () => {
    const html = renderMarkdown('<iframe src="https://x"></iframe><form><input></form><p style="position:fixed">p</p>');
    expect(html).not.toMatch(/<iframe|<form|<input|style=/i);
    expect(html).toContain('<p>p</p>');
  });
});
