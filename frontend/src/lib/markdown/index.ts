// Markdown for agent messages: marked renders, DOMPurify sanitises, always in
// that order (style.md §4). The output is the only HTML the UI injects with
// {@html}; nothing an agent writes can run script, load a frame or style the
// page.
import DOMPurify from 'dompurify';
import { Marked } from 'marked';

const marked = new Marked({ gfm: true, breaks: false, async: false });

let hooked = false;

function purifier() {
  if (!hooked) {
    // Links open outside the app and never carry the opener or referrer.
    DOMPurify.addHook('afterSanitizeAttributes', (node) => {
      if (node.tagName === 'A' && node.hasAttribute('href')) {
        node.setAttribute('target', '_blank');
        node.setAttribute('rel', 'noopener noreferrer');
      }
    });
    hooked = true;
  }
  return DOMPurify;
}

/** Tags an agent message may not use even though they are not script. */
const FORBID_TAGS = ['style', 'form', 'input', 'button', 'textarea', 'select', 'img', 'video', 'audio', 'iframe'];

/** Renders Markdown to sanitised HTML. */
export function renderMarkdown(text: string): string {
  const html = marked.parse(text) as string;
  return purifier().sanitize(html, {
    USE_PROFILES: { html: true },
    FORBID_TAGS,
    FORBID_ATTR: ['style'],
  });
}
