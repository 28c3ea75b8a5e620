/**
 * A job's `params` as template values: `{{name}}` in a start URL or in a website's selectors is
 * replaced by the param of that name. One syntax for both, escaped for where it lands, so a param
 * can never change the shape of what it is put into:
 *
 * - in a URL, the value is percent-encoded as one component (encodeURIComponent): a param cannot add
 *   a path segment, a query parameter or a fragment;
 * - in a CSS selector, the value is escaped as CSSOM's CSS.escape does: it reads as one identifier,
 *   or as plain text inside a quoted attribute value, never as a combinator, quote or new rule.
 *
 * Names are letters, digits, `_`, `-` and `.`; spaces inside the braces are allowed (`{{ q }}`).
 * Text that is not a well-formed placeholder is left alone. A placeholder without a value is an
 * error (MissingParamError) rather than an empty string: a crawl of `?q=` is not what was asked.
 */
import type { CrawlSpec } from '@trawl/schemas';
import { MissingParamError } from '../errors.ts';

export type Params = Readonly<Record<string, string>>;

const PLACEHOLDER = /\{\{\s*([A-Za-z0-9_.-]+)\s*\}\}/g;
/** One placeholder anywhere: a test, no matches collected (the worker asks it of every page's selectors). */
const ANY_PLACEHOLDER = /\{\{\s*[A-Za-z0-9_.-]+\s*\}\}/;

/** The param names a template refers to, in order of first use. */
export function templateNames(template: string): string[] {
  return [...new Set([...template.matchAll(PLACEHOLDER)].map((m) => m[1]!))];
}

export function hasPlaceholders(template: string): boolean {
  return ANY_PLACEHOLDER.test(template);
}

function render(template: string, params: Params, escape: (value: string) => string): string {
  return template.replace(PLACEHOLDER, (_, name: string) => {
    if (!Object.hasOwn(params, name)) throw new MissingParamError(`"{{${name}}}" has no value: add "${name}" to params`, name);
    return escape(params[name]!);
  });
}

/** A URL template filled in, each value percent-encoded as one component. */
export function renderUrl(template: string, params: Params): string {
  return render(template, params, encodeURIComponent);
}

/** A CSS selector template filled in, each value escaped as CSS.escape does. */
export function renderSelector(template: string, params: Params): string {
  return render(template, params, cssEscape);
}

/** CSSOM's CSS.escape (https://drafts.csswg.org/cssom/#serialize-an-identifier), which Node lacks. */
export function cssEscape(value: string): string {
  let out = '';
  for (let i = 0; i < value.length; i++) {
    const c = value.charCodeAt(i);
    const ch = value.charAt(i);
    if (c === 0) out += '\uFFFD';
    else if ((c >= 0x01 && c <= 0x1f) || c === 0x7f) out += `\\${c.toString(16)} `;
    else if (i === 0 && c >= 0x30 && c <= 0x39) out += `\\${c.toString(16)} `;
    else if (i === 1 && c >= 0x30 && c <= 0x39 && value.charCodeAt(0) === 0x2d) out += `\\${c.toString(16)} `;
    else if (i === 0 && c === 0x2d && value.length === 1) out += `\\${ch}`;
    else if (c >= 0x80 || c === 0x2d || c === 0x5f || (c >= 0x30 && c <= 0x39) || (c >= 0x41 && c <= 0x5a) || (c >= 0x61 && c <= 0x7a)) out += ch;
    else out += `\\${ch}`;
  }
  return out;
}

/** The selectors of a spec filled in from the params; the spec itself when nothing refers to one. */
export function specWithParams(spec: CrawlSpec, params: Params): CrawlSpec {
  if (!templated(spec)) return spec;
  return {
    ...spec,
    item_root: spec.item_root === null ? null : renderSelector(spec.item_root, params),
    next_link_selector: spec.next_link_selector === null ? null : renderSelector(spec.next_link_selector, params),
    item_fields: spec.item_fields.map((f) => ({ ...f, selector: renderSelector(f.selector, params) })),
  };
}

const templatedSpecs = new WeakMap<CrawlSpec, boolean>();

/** Whether any of the spec's selectors holds a placeholder; known once per spec object (a worker's specs come from its cache). */
function templated(spec: CrawlSpec): boolean {
  let known = templatedSpecs.get(spec);
  if (known === undefined) {
    known = [spec.item_root, spec.next_link_selector, ...spec.item_fields.map((f) => f.selector)].some((s) => s !== null && hasPlaceholders(s));
    templatedSpecs.set(spec, known);
  }
  return known;
}

/** Every param name a spec's selectors refer to: what a request with this spec must give. */
export function specParamNames(spec: Pick<CrawlSpec, 'item_root' | 'next_link_selector' | 'item_fields'>): string[] {
  const selectors = [spec.item_root, spec.next_link_selector, ...spec.item_fields.map((f) => f.selector)];
  return [...new Set(selectors.flatMap((s) => (s === null ? [] : templateNames(s))))];
}
