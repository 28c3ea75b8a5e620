import { DomHandler, Element, type Document } from 'domhandler';
import { Parser, type Handler, type ParserOptions } from 'htmlparser2';

/** Past this many top-level nodes the document is wrapped in one element (see below). */
const MAX_ROOT_CHILDREN = 16;

/** Chromium's HTML parser nests elements at most this deep; so does Trawl's (see below). */
export const MAX_NESTING_DEPTH = 512;

const PARSER_OPTIONS: ParserOptions = { xmlMode: false, decodeEntities: true, lowerCaseTags: true, lowerCaseAttributeNames: true };

/** htmlparser2's Parser keeps its open elements in a private array, innermost first. */
interface ParserInternals {
  readonly stack: string[];
  readonly cbs: Partial<Handler>;
}

/**
 * htmlparser2 closes no `<div>` or `<a>` by itself, and opening an element costs it time in the
 * number of elements open (`stack.unshift`): 100,000 nested divs, or 100,000 unclosed `<a href>`s
 * in a row, took 5 s to parse, a million of them minutes. Like a browser, this parser nests at
 * most MAX_NESTING_DEPTH deep: at that depth, an opening tag first closes the innermost element,
 * so it becomes that element's sibling instead of its child. End tags left over close nothing.
 */
class DepthCappedParser extends Parser {
  override onopentagname(start: number, endIndex: number): void {
    const { stack, cbs } = this as unknown as ParserInternals;
    if (stack.length >= MAX_NESTING_DEPTH) cbs.onclosetag?.(stack.shift()!, true);
    super.onopentagname(start, endIndex);
  }
}

/**
 * Parse HTML with htmlparser2 (what cheerio's slim entry point uses) rather than parse5: several times
 * faster and lighter, which is what throughput needs; it is less faithful to the HTML spec's error recovery, which
 * matters little for reading links and CSS-selected fields. Input size is already bounded by the fetcher.
 *
 * htmlparser2 does not invent `<html>`/`<body>`, and css-select is quadratic in the number of
 * top-level nodes: 20,000 bare anchors took seconds to select. Such a document (an HTML bomb, or just
 * a fragment) gets one synthetic root element around its top level, which brings selection back to
 * linear. Selectors that start at `html` or `body` still work: those elements, if present, are kept.
 * Selection is quadratic in the nesting depth too (domutils' findAll), which the parser bounds.
 */
export function loadHtml(html: string): Document {
  const handler = new DomHandler(undefined, PARSER_OPTIONS);
  new DepthCappedParser(handler, PARSER_OPTIONS).end(html);
  const doc = handler.root;
  if (doc.children.length > MAX_ROOT_CHILDREN) {
    const root = new Element('trawl-root', {}, doc.children);
    for (const child of root.children) child.parent = root;
    root.parent = doc;
    doc.children = [root];
  }
  return doc;
}
