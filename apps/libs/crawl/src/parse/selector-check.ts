/**
 * Users' CSS selectors (a website's item root, fields and next link), checked before they run.
 * They run in css-select (select.ts), whose cost is the number of elements times the work one match
 * takes, and some constructs make that work grow with the page: on a page of 10,000 sibling
 * elements, `b:has(~ i)` takes 4.6 s, `i ~ b` 1.5 s, `div:has(:contains("x"))` over 500 nested
 * divs 9.8 s, where ordinary selectors take under 5 ms. A selector is parsed here with css-what, the
 * parser css-select itself uses (so the two never read a selector differently), and refused when it:
 *
 * - is not a selector (`invalid`), or names a pseudo-class neither css-select nor cheerio knows;
 * - uses the general sibling combinator `~` anywhere: each candidate scans all its earlier
 *   siblings, quadratic in a long list;
 * - puts a sibling combinator, `:has` or `:contains` inside `:has`: the argument is matched against
 *   every sibling or every descendant of every candidate;
 * - nests pseudo-classes with selector arguments deeper than MAX_PSEUDO_DEPTH, or is longer than
 *   MAX_SELECTOR_LIST selectors or MAX_COMPOUNDS compounds (each compound can multiply the work).
 *
 * What passes can still be slow on a page built against it (an `:nth-last-child` over 10,000
 * siblings: 0.6 s); that is bounded where the parse runs, on a thread with a time limit of its own,
 * never on the worker's main thread (the worker's parse pool). This check is what lets a user know
 * at once, when saving a website or submitting a crawl, rather than through failed pages.
 */
import { parse, type Selector } from 'css-what';
import { aliases, filters, pseudos } from 'css-select';
import { TrawlError } from '@trawl/schemas';

/** Selectors in one comma-separated list. */
export const MAX_SELECTOR_LIST = 16;
/** Compounds (parts between combinators) in one selector, arguments of pseudo-classes included. */
export const MAX_COMPOUNDS = 16;
/** Pseudo-classes with a selector argument inside one another (`:not(:is(.a))` is 2). */
export const MAX_PSEUDO_DEPTH = 2;

/** Pseudo-classes whose argument is a selector list. */
const SUBSELECTS = new Set(['not', 'is', 'matches', 'where', 'has']);
/** cheerio's jQuery positionals, answered by cheerio over the same nodes (select.ts). */
const POSITIONALS = ['first', 'last', 'eq', 'nth', 'gt', 'lt', 'even', 'odd'];
const KNOWN_PSEUDOS = new Set([...Object.keys(pseudos), ...Object.keys(filters), ...Object.keys(aliases), ...SUBSELECTS, ...POSITIONALS]);
const SIBLING_COMBINATORS = new Set(['sibling', 'adjacent']);
const COMBINATORS = new Set(['descendant', 'child', 'parent', 'sibling', 'adjacent', 'column-combinator']);

/** Why a selector cannot be used. `invalid`: not a selector; `costly`: a construct whose cost grows with the page. */
export interface SelectorProblem {
  readonly kind: 'invalid' | 'costly';
  readonly message: string;
}

/** A selector that cannot be used; callers say where it was given (the API's field, a job's INVALID_SPEC). */
export class SelectorError extends TrawlError {
  readonly code = 'TRAWL_INVALID_SELECTOR';
  readonly retriable = false;
  constructor(
    readonly selector: string,
    readonly problem: SelectorProblem,
  ) {
    super(problem.message);
  }
}

/** The problem with `selector`, or null when it may run. `{{name}}` placeholders are read as plain text. */
export function selectorProblem(selector: string): SelectorProblem | null {
  if (selector.trim() === '') return { kind: 'invalid', message: 'is empty' };
  let list: Selector[][];
  try {
    list = parse(selector.replace(/\{\{\s*[\w.-]+\s*\}\}/g, 'x'));
  } catch (err) {
    return { kind: 'invalid', message: `is not a CSS selector: ${(err as Error).message}` };
  }
  if (list.length > MAX_SELECTOR_LIST) return { kind: 'costly', message: `lists ${list.length} selectors; at most ${MAX_SELECTOR_LIST} are allowed` };
  const count = { compounds: 0 };
  for (const tokens of list) {
    const problem = checkSequence(tokens, { depth: 0, inHas: false }, count);
    if (problem) return problem;
  }
  return null;
}

/** Throws a {@link SelectorError} when `selector` cannot be used. */
export function checkSelector(selector: string): void {
  const problem = selectorProblem(selector);
  if (problem) throw new SelectorError(selector, problem);
}

/** A spec's selectors by where they are given (`item_root`, `item_fields.2.selector`, `next_link_selector`); empty ones are left out. */
export function specSelectors(spec: {
  readonly item_root: string | null;
  readonly item_fields: readonly { readonly selector: string }[];
  readonly next_link_selector: string | null;
}): [field: string, selector: string][] {
  const out: [string, string][] = [];
  if (spec.item_root) out.push(['item_root', spec.item_root]);
  spec.item_fields.forEach((f, i) => {
    if (f.selector.trim() !== '') out.push([`item_fields.${i}.selector`, f.selector]);
  });
  if (spec.next_link_selector) out.push(['next_link_selector', spec.next_link_selector]);
  return out;
}

interface Context {
  /** Pseudo-classes with selector arguments around this sequence. */
  readonly depth: number;
  /** Inside a `:has` argument. */
  readonly inHas: boolean;
}

function checkSequence(tokens: readonly Selector[], at: Context, count: { compounds: number }): SelectorProblem | null {
  count.compounds += 1;
  for (const token of tokens) {
    if (COMBINATORS.has(token.type)) {
      count.compounds += 1;
      if (token.type === 'sibling') return costly('uses the general sibling combinator `~`, whose cost grows with the square of a list\'s length');
      if (at.inHas && SIBLING_COMBINATORS.has(token.type)) return costly('puts a sibling combinator inside `:has`, which matches it against every sibling of every candidate');
      continue;
    }
    if (token.type !== 'pseudo') continue;
    if (!KNOWN_PSEUDOS.has(token.name)) return { kind: 'invalid', message: `uses :${token.name}, a pseudo-class the extraction does not know` };
    if (at.inHas && (token.name === 'has' || token.name === 'contains' || token.name === 'icontains')) {
      return costly(`puts :${token.name} inside \`:has\`, which runs it over every descendant of every candidate`);
    }
    if (!SUBSELECTS.has(token.name) || !Array.isArray(token.data)) continue;
    const inner: Context = { depth: at.depth + 1, inHas: at.inHas || token.name === 'has' };
    if (inner.depth > MAX_PSEUDO_DEPTH) return costly(`nests pseudo-classes with selector arguments ${inner.depth} deep; at most ${MAX_PSEUDO_DEPTH} are allowed`);
    for (const sequence of token.data) {
      const problem = checkSequence(sequence, inner, count);
      if (problem) return problem;
    }
  }
  if (count.compounds > MAX_COMPOUNDS) return costly(`has ${count.compounds} compounds; at most ${MAX_COMPOUNDS} are allowed`);
  return null;
}

function costly(message: string): SelectorProblem {
  return { kind: 'costly', message };
}
