import type { CrawlSpec } from '@trawl/schemas';
import { compileRules, type CrawlRules } from '../rules/crawl-rules.ts';
import { baseUrlOf } from './base-url.ts';
import { extractItems, type ExtractedItem, type ExtractedItems, type ItemLimits } from './extract-items.ts';
import { extractLinks, type ExtractedLinks, type LinkLimits } from './extract-links.ts';
import { loadHtml } from './load-html.ts';
import { findNextPage } from './pagination.ts';
import { selectorProblem, specSelectors } from './selector-check.ts';
import { InvalidSpecError } from '../errors.ts';

export interface ParseLimits extends LinkLimits, ItemLimits {}

export const DEFAULT_PARSE_LIMITS: ParseLimits = { maxLinks: 5_000, maxAnchors: 50_000, maxItems: 1_000, maxItemBytes: 4 * 1024 * 1024, ruleBudgetMs: 1_000 };

/** The parse limits with what the environment sets (`TRAWL_PARSE_MAX_ITEM_BYTES`, `TRAWL_PARSE_RULE_BUDGET_MS`). */
export function parseLimitsFromEnv(env: NodeJS.ProcessEnv = process.env): ParseLimits {
  const positive = (name: string, dflt: number) => {
    const raw = env[name];
    if (raw === undefined || raw.trim() === '') return dflt;
    const n = Number(raw);
    if (!Number.isSafeInteger(n) || n <= 0) throw new RangeError(`${name} must be a positive whole number, not ${JSON.stringify(raw)}`);
    return n;
  };
  return {
    ...DEFAULT_PARSE_LIMITS,
    maxItemBytes: positive('TRAWL_PARSE_MAX_ITEM_BYTES', DEFAULT_PARSE_LIMITS.maxItemBytes),
    ruleBudgetMs: positive('TRAWL_PARSE_RULE_BUDGET_MS', DEFAULT_PARSE_LIMITS.ruleBudgetMs),
  };
}

export interface ParsePageInput {
  readonly html: string;
  /** The requested (normalised) URL: host rule reference and item-key input. */
  readonly url: string;
  /** Where redirects ended: relative links resolve against it (or its `<base href>`). */
  readonly finalUrl: string;
  /** Compiled once per job (or per spec) by the caller; compiled here when absent. */
  readonly rules?: CrawlRules;
  readonly spec?: CrawlSpec;
  readonly limits?: ParseLimits;
}

export interface ParsedPage {
  /** What goes into PageFetched.links: the links kept by the rules. */
  readonly links: string[];
  /** PageFetched.next_page: the pagination successor, requested at the same depth (see pagination.ts). */
  readonly nextPage: string | null;
  readonly items: ExtractedItem[];
  /** Links not kept, by reason. */
  readonly dropped: ExtractedLinks['dropped'];
  /** UTF-8 bytes of the items (field names and values). */
  readonly itemBytes: number;
  /** Items not extracted, past `maxItems` or `maxItemBytes`. */
  readonly itemsCut: ExtractedItems['cut'];
  /** What the limits cut from the page, or null when they cut nothing: the worker logs it. */
  readonly cut: PageCut | null;
}

/** What the parse limits left out of a page. */
export interface PageCut {
  /** Anchors past `maxAnchors` and kept links past `maxLinks`. */
  readonly linksCapped: number;
  /** Links not checked because the page's rule checks ran out of `ruleBudgetMs`. */
  readonly linksOverBudget: number;
  /** Item roots past `maxItems`. */
  readonly itemsOverCount: number;
  /** Items past `maxItemBytes`. */
  readonly itemsOverBytes: number;
}

function cutOf(dropped: ExtractedLinks['dropped'], items: ExtractedItems['cut']): PageCut | null {
  const cut = { linksCapped: dropped.capped ?? 0, linksOverBudget: dropped.over_budget ?? 0, itemsOverCount: items.overCount, itemsOverBytes: items.overBytes };
  return cut.linksCapped + cut.linksOverBudget + cut.itemsOverCount + cut.itemsOverBytes > 0 ? cut : null;
}

export function parsePage(input: ParsePageInput): ParsedPage {
  const rules = input.rules ?? compileRules(requireSpec(input.spec));
  checkSelectors(rules.spec);
  const limits = input.limits ?? DEFAULT_PARSE_LIMITS;
  const doc = loadHtml(input.html);
  const base = baseUrlOf(doc, input.finalUrl);
  const { links, dropped } = extractLinks(doc, base, input.url, rules, limits);
  const { items, bytes, cut } = extractItems(doc, rules.spec, base, input.url, limits);
  const nextPage = findNextPage(doc, rules, base, input.url, items.length);
  return { links, nextPage, items, dropped, itemBytes: bytes, itemsCut: cut, cut: cutOf(dropped, cut) };
}

/**
 * The spec's selectors, as the API checks them when a website is saved (selector-check.ts): a
 * website saved before the check meets it here, and its pages fail TRAWL_INVALID_SPEC rather than
 * run a selector whose cost grows with the page. Checked where pages are parsed, not with the
 * crawl rules: the frontier compiles rules too, and a job dispatched before the check must still
 * end there.
 */
function checkSelectors(spec: CrawlSpec): void {
  let refusal = checkedSpecs.get(spec);
  if (refusal === undefined) {
    refusal = null;
    for (const [field, selector] of specSelectors(spec)) {
      const problem = selectorProblem(selector);
      if (problem) {
        refusal = `${field} ${JSON.stringify(selector)} ${problem.message}`;
        break;
      }
    }
    checkedSpecs.set(spec, refusal);
  }
  if (refusal !== null) throw new InvalidSpecError(refusal);
}

/** What checkSelectors found, per spec object: a job's rules (and their spec) are compiled once, so a page asks once. */
const checkedSpecs = new WeakMap<CrawlSpec, string | null>();

function requireSpec(spec: CrawlSpec | undefined): CrawlSpec {
  if (!spec) throw new TypeError('parsePage needs rules or a spec');
  return spec;
}
