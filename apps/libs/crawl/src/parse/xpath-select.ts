/**
 * XPath 1.0 on a parsed page, beside CSS (select.ts): a website's item root and fields may be XPath
 * expressions. They run in the `xpath` library (XPath 1.0, no dependencies) over the page's view
 * (xpath-dom.ts), after xpath-check.ts has refused what costs more than the page's size.
 *
 * Expressions are parsed once and kept, as CSS selectors are. The library is loaded through
 * `require`: its type declarations pull the browser's DOM types into every file that imports it.
 *
 * HTML reads case-insensitively (`//DIV` finds `<div>`) and without namespaces, as in a browser.
 */
import { createRequire } from 'node:module';
import type { AnyNode, Element } from 'domhandler';
import { attributeOfView, rawOf, type DocumentView, type DomNode } from './xpath-dom.ts';
import { collapsedText, cutAt } from './bounded-text.ts';
import { attributeOf } from './select.ts';

/** What the library answers: a node set, a string, a number or a boolean. */
interface XValue {
  stringValue(): string;
  toArray?(): DomNode[];
}

/** @internal The parts of the `xpath` module Trawl uses; its AST is read by xpath-check.ts. */
export interface XPathModule {
  parse(expression: string): { readonly expression: { readonly expression: unknown }; evaluate(options: { node: DomNode; isHtml: boolean }): XValue };
  readonly XNodeSet: new () => unknown;
  readonly XNumber: new () => unknown;
  readonly XBoolean: new () => unknown;
}

const require = createRequire(import.meta.url);
export const xpathModule = require('xpath') as XPathModule;

type Compiled = ReturnType<XPathModule['parse']>;

const compiledExpressions = new Map<string, Compiled | null>();
const MAX_COMPILED = 10_000;

function compiled(expression: string): Compiled {
  let c = compiledExpressions.get(expression);
  if (c === undefined) {
    try {
      c = xpathModule.parse(expression);
    } catch {
      c = null;
    }
    if (compiledExpressions.size >= MAX_COMPILED) compiledExpressions.clear();
    compiledExpressions.set(expression, c);
  }
  // Checked when saved (xpath-check.ts) and again per spec where pages are parsed (parse-page.ts).
  if (c === null) throw new SyntaxError(`not an XPath 1.0 expression: ${expression}`);
  return c;
}

function evaluate(view: DocumentView, context: AnyNode, expression: string): XValue {
  return compiled(expression).evaluate({ node: view.of(context), isHtml: true });
}

/** The elements `expression` selects from `context`, in document order (other nodes are left out). */
export function xpathElements(view: DocumentView, context: AnyNode, expression: string): Element[] {
  const value = evaluate(view, context, expression);
  if (!(value instanceof xpathModule.XNodeSet)) return [];
  const out: Element[] = [];
  for (const node of value.toArray!()) if (node.nodeType === 1) out.push(rawOf(node) as Element);
  return out;
}

/** A field's value read by XPath, and whether it is a URL attribute's (to be made absolute). */
export interface XPathFieldValue {
  readonly value: string;
  /** The attribute read, when the value is one. */
  readonly attribute: string | null;
}

/**
 * A field by XPath from its item root: the first node selected — an element's text (whitespace
 * collapsed) or its `attribute`, an attribute node's value, a text node's text — or the string of
 * what a function or an operator answers (`normalize-space(h2)`, `count(li)`). Undefined when the
 * expression selects nothing (or the element lacks the attribute): the field is absent.
 */
export function xpathField(view: DocumentView, root: AnyNode, expression: string, attribute: string | null, maxChars: number): XPathFieldValue | undefined {
  const value = evaluate(view, root, expression);
  if (!(value instanceof xpathModule.XNodeSet)) {
    return { value: cutAt(value.stringValue().replace(/\s+/g, ' ').trim(), maxChars), attribute: null };
  }
  const first = value.toArray!()[0];
  if (first === undefined) return undefined;
  const attr = attributeOfView(first);
  if (attr) {
    const v = attributeOf(attr.element, attr.name, maxChars);
    return v === undefined ? undefined : { value: cutAt(v.trim(), maxChars), attribute: attr.name };
  }
  const raw = rawOf(first);
  if (first.nodeType === 1 && attribute !== null) {
    const v = attributeOf(raw as Element, attribute, maxChars);
    return v === undefined ? undefined : { value: cutAt(v.trim(), maxChars), attribute };
  }
  return { value: collapsedText(raw, maxChars), attribute: null };
}
