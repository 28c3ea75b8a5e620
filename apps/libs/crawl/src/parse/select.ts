/**
 * CSS selection on a parsed page, without cheerio in the way: selectors are compiled once by
 * css-select and kept (a crawl has a handful: the anchors, `<base>`, a website's item root, fields
 * and next link), where cheerio's `$(selector)` compiles again on every call and wraps every result.
 * On the bench site that was half of parsePage's time beyond the HTML parse itself
 * (`npm run bench:parse -w @trawl/bench`).
 *
 * The answers are cheerio's: the same elements in document order, attributes as cheerio's `attr()`
 * reads them (text is read with a budget, by bounded-text.ts). A selector
 * css-select cannot compile (cheerio's jQuery extensions such as `:first` or `:eq(1)`) is remembered
 * as such and answered by cheerio over the same nodes, made once per document.
 */
import { load, type CheerioAPI } from 'cheerio/slim';
import { compile, selectAll, selectOne } from 'css-select';
import type { AnyNode, Document, Element, ParentNode } from 'domhandler';
import { rawText } from './bounded-text.ts';

type Query = ReturnType<typeof compile<AnyNode, Element>>;

const compiledSelectors = new Map<string, Query | null>();
const MAX_COMPILED_SELECTORS = 10_000;

function compiled(selector: string): Query | null {
  let query = compiledSelectors.get(selector);
  if (query !== undefined) return query;
  try {
    query = compile<AnyNode, Element>(selector, { xmlMode: false });
  } catch {
    query = null;
  }
  if (compiledSelectors.size >= MAX_COMPILED_SELECTORS) compiledSelectors.clear();
  compiledSelectors.set(selector, query);
  return query;
}

/** cheerio over a document, for the selectors only it understands; made at most once per document. */
const cheerioOf = new WeakMap<Document, CheerioAPI>();

function cheerio(doc: Document): CheerioAPI {
  let $ = cheerioOf.get(doc);
  if (!$) cheerioOf.set(doc, ($ = load(doc)));
  return $;
}

/** The document a node belongs to. */
function documentOf(node: ParentNode): Document {
  let top: ParentNode = node;
  while (top.parent) top = top.parent;
  return top as Document;
}

/** Every element below `context` matching `selector`, in document order: cheerio's `$(context).find(selector)`. */
export function selectAllIn(context: ParentNode, selector: string): Element[] {
  const query = compiled(selector);
  if (query !== null) return selectAll<AnyNode, Element>(query, context.children);
  const $ = cheerio(documentOf(context));
  return $(context).find(selector).toArray() as Element[];
}

/** The first element below `context` matching `selector`: cheerio's `$(context).find(selector).first()`. */
export function selectFirstIn(context: ParentNode, selector: string): Element | null {
  const query = compiled(selector);
  if (query !== null) return selectOne<AnyNode, Element>(query, context.children);
  const $ = cheerio(documentOf(context));
  return ($(context).find(selector).get(0) as Element | undefined) ?? null;
}

const BOOLEAN_ATTRIBUTE = /^(?:autofocus|autoplay|async|checked|controls|defer|disabled|hidden|loop|multiple|open|readonly|required|scoped|selected)$/i;

/**
 * An attribute as cheerio's `attr(name)` reads it in HTML mode: a boolean attribute present reads
 * as its name, `value` of an `<option>` without one as its text (its first `maxTextChars`
 * characters), of a radio or checkbox as `on`.
 */
export function attributeOf(el: Element, name: string, maxTextChars = Number.POSITIVE_INFINITY): string | undefined {
  if (Object.hasOwn(el.attribs, name)) return BOOLEAN_ATTRIBUTE.test(name) ? name : el.attribs[name];
  if (name !== 'value') return undefined;
  if (el.name === 'option') return rawText(el, maxTextChars);
  const type = el.attribs.type;
  return el.name === 'input' && (type === 'radio' || type === 'checkbox') ? 'on' : undefined;
}
