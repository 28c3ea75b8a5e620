/**
 * A page's main text for its similarity hash: the text of its `<main>` (else its first
 * `<article>`, else its `<body>`, else the whole document) without what repeats from page to page
 * or is no text at all — scripts, styles, templates, navigation, headers, footers, asides, forms.
 * Cheap on purpose (one walk of the tree the parse step has, at most `maxChars` characters):
 * Readability would find the main content better, at many times the cost of the parse itself, for
 * every page. Mirrors, print views and session-id copies of a page differ in exactly the parts
 * left out here (a print view has no navigation; a session id lives in links), so the texts compared
 * are the same.
 */
import { isTag, isText, type AnyNode, type Document } from 'domhandler';
import { selectFirstIn } from '../parse/select.ts';

const SKIPPED = new Set(['script', 'style', 'noscript', 'template', 'nav', 'header', 'footer', 'aside', 'form', 'svg', 'select', 'button', 'iframe', 'head']);

/** Characters read by default: past them the rest of the page does not count. */
export const MAX_MAIN_TEXT_CHARS = 200_000;

export function mainText(doc: Document, maxChars = MAX_MAIN_TEXT_CHARS): string {
  const root = selectFirstIn(doc, 'main') ?? selectFirstIn(doc, 'article') ?? selectFirstIn(doc, 'body') ?? doc;
  let out = '';
  const stack: AnyNode[] = [...root.children].reverse();
  while (stack.length > 0 && out.length < maxChars) {
    const node = stack.pop()!;
    if (isText(node)) {
      out += `${node.data} `;
      continue;
    }
    if (!isTag(node) || SKIPPED.has(node.name)) continue;
    for (let i = node.children.length - 1; i >= 0; i--) stack.push(node.children[i]!);
  }
  return out.slice(0, maxChars);
}
