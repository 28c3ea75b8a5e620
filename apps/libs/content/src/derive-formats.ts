/**
 * Text and Markdown of an HTML page, derived from the body the worker fetched: its whole body
 * without scripts, styles and templates, or with `mainContent` (CrawlSpec.only_main_content) its
 * main content alone.
 *
 * - The main content comes from Mozilla Readability (@mozilla/readability): Firefox Reader View's
 *   own algorithm, maintained by Mozilla, which drops navigation, headers, footers and ads. It needs
 *   a DOM; linkedom gives one at a fraction of jsdom's cost, which matters per page in a worker.
 * - Markdown comes from that content through turndown, the most used HTML-to-Markdown converter,
 *   with ATX headings and fenced code blocks (what Markdown readers and language models expect).
 * - A page Readability finds no article in (a listing, a short page) falls back to its whole body
 *   without scripts, styles and templates, so every HTML page has a text and a Markdown.
 * - Relative links are resolved against the page's final URL, so the Markdown's links work on
 *   their own.
 */
import { Readability } from '@mozilla/readability';
import { parseHTML } from 'linkedom';
import TurndownService from 'turndown';

export interface DeriveOptions {
  /** Only the main content (Readability) rather than the whole body; default false. */
  readonly mainContent?: boolean;
}

export interface DerivedPage {
  readonly title: string | null;
  readonly text: string;
  readonly markdown: string;
}

type LinkedDocument = ReturnType<typeof parseHTML>['document'];
type LinkedElement = NonNullable<ReturnType<LinkedDocument['querySelector']>>;
type ReadabilityDocument = ConstructorParameters<typeof Readability>[0];

const turndown = new TurndownService({ headingStyle: 'atx', codeBlockStyle: 'fenced', bulletListMarker: '-' });
turndown.remove(['script', 'style', 'noscript', 'template', 'iframe']);

/** Collapses runs of blank space inside lines and of blank lines, as a reader would see the text. */
function tidyText(text: string): string {
  return text
    .split('\n')
    .map((line) => line.replace(/[ \t\u00a0]+/g, ' ').trim())
    .join('\n')
    .replace(/\n{3,}/g, '\n\n')
    .trim();
}

const BLOCKS = 'p, div, li, h1, h2, h3, h4, h5, h6, tr, pre, blockquote, section, article, header, footer, ul, ol, table, dt, dd, figcaption';

/** The text of an element with a line break after each block, as it reads on screen (textContent runs list items together). */
function blockText(root: LinkedElement): string {
  for (const el of root.querySelectorAll('br')) el.replaceWith('\n');
  for (const el of root.querySelectorAll(BLOCKS)) el.after('\n');
  return tidyText(root.textContent ?? '');
}

function absolutise(document: LinkedDocument, baseUrl: string): void {
  for (const [selector, attr] of [['a[href]', 'href'], ['img[src]', 'src']] as const) {
    for (const el of document.querySelectorAll(selector)) {
      const value = el.getAttribute(attr);
      if (!value || value.startsWith('#')) continue;
      try {
        el.setAttribute(attr, new URL(value, baseUrl).toString());
      } catch {
        // A link that is not a URL stays as written.
      }
    }
  }
}

export function derivePage(html: string, url: string, options: DeriveOptions = {}): DerivedPage {
  const { document } = parseHTML(html);
  absolutise(document, url);
  const fallbackTitle = document.querySelector('title')?.textContent?.trim() || null;
  // Readability changes the document it reads: it gets its own copy.
  const article = options.mainContent ? new Readability(parseHTML(document.toString()).document as unknown as ReadabilityDocument, { keepClasses: false }).parse() : null;
  if (article?.content) {
    const title = article.title?.trim() || fallbackTitle;
    const body = turndown.turndown(article.content).trim();
    const heading = title && !body.startsWith('# ') ? `# ${title}\n\n` : '';
    const content = parseHTML(`<html><body>${article.content}</body></html>`).document.querySelector('body')!;
    return { title, text: blockText(content), markdown: `${heading}${body}\n` };
  }
  for (const el of document.querySelectorAll('script, style, noscript, template')) el.remove();
  const root = document.querySelector('body') ?? document.documentElement;
  const markdown = `${turndown.turndown(root?.innerHTML ?? '').trim()}\n`;
  return { title: fallbackTitle, text: root ? blockText(root) : '', markdown };
}
