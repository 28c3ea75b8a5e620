import type { CrawlSpec } from '@trawl/schemas';
import { compileRules, hostOf, type CrawlRules } from '../rules/crawl-rules.ts';
import { normaliseUrlOrNull } from '../url/normalise.ts';
import { canonicalOf } from './page-hints.ts';
import { baseUrlOf } from './base-url.ts';
import { extractItems, extractsItems, itemRootsOf, type ExtractedItem, type ExtractedItems, type ItemLimits } from './extract-items.ts';
import { extractLinks, type ExtractedLinks, type LinkLimits } from './extract-links.ts';
import { loadHtml } from './load-html.ts';
import { findNextPage } from './pagination.ts';
import { downloadLinks } from './download-links.ts';
import { selectorProblem, specSelectors } from './selector-check.ts';
import { itemSpecProblem } from './item-spec-check.ts';
import { InvalidSpecError } from '../errors.ts';
import { extractMetadata, type PageMetadata } from './page-metadata.ts';
import { mainText } from '../dedupe/main-text.ts';
import { simhash } from '../dedupe/simhash.ts';
import type { Document } from 'domhandler';

export interface ParseLimits extends LinkLimits, ItemLimits {
  /** Linked files a page's downloads fetch at most (CrawlSpec.downloads; TRAWL_DOWNLOADS_MAX_PER_PAGE). Absent: 10. */
  readonly maxDownloads?: number;
  /** Whether pages get their similarity hash (PageFetched.simhash): off where near-duplicate marking is (TRAWL_NEAR_DUPLICATE_DISTANCE=off), which saves its per-page cost. Absent: on. */
  readonly similarity?: boolean;
}

export const DEFAULT_PARSE_LIMITS: ParseLimits = { maxLinks: 5_000, maxAnchors: 50_000, maxItems: 1_000, maxItemBytes: 4 * 1024 * 1024, ruleBudgetMs: 1_000, maxDownloads: 10 };

/** The parse limits with what the environment sets (`TRAWL_PARSE_MAX_ITEM_BYTES`, `TRAWL_PARSE_RULE_BUDGET_MS`, `TRAWL_DOWNLOADS_MAX_PER_PAGE`). */
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
    maxDownloads: positive('TRAWL_DOWNLOADS_MAX_PER_PAGE', DEFAULT_PARSE_LIMITS.maxDownloads!),
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
  /** PageFetched.canonical_url: set when the page is a duplicate of this URL and its items were not extracted (see {@link duplicateOf}). */
  readonly canonical: string | null;
  readonly items: ExtractedItem[];
  /** Links not kept, by reason. */
  readonly dropped: ExtractedLinks['dropped'];
  /** UTF-8 bytes of the items (field names and values). */
  readonly itemBytes: number;
  /** Items not extracted, past `maxItems` or `maxItemBytes`. */
  readonly itemsCut: ExtractedItems['cut'];
  /** What the limits cut from the page, or null when they cut nothing: the worker logs it. */
  readonly cut: PageCut | null;
  /** Linked files the job's downloads fetch (download-links.ts), normalised; empty without CrawlSpec.downloads. */
  readonly downloads: string[];
  /** The page's structured data (page-metadata.ts), read when the job keeps the `metadata` format; null otherwise. */
  readonly metadata: PageMetadata | null;
  /** PageFetched.simhash: the similarity hash of the page's main text (dedupe/simhash.ts), null when it has none. */
  readonly simhash: string | null;
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
  const canonical = duplicateOf(doc, base, input.url, input.finalUrl, rules);
  const { items, bytes, cut } = canonical === null ? extractItems(doc, rules.spec, base, input.url, limits) : NO_ITEMS;
  // A duplicate's pagination goes on as the page's own would (its listing may continue past it): what
  // ends a page_param listing, a page without items, is read from the item roots it shows.
  const shown = canonical === null ? items.length : extractsItems(rules.spec) ? itemRootsOf(doc, rules.spec).length : 0;
  const nextPage = findNextPage(doc, rules, base, input.url, shown);
  const metadata = rules.spec.formats.includes('metadata') ? extractMetadata(doc, base) : null;
  const downloads = rules.spec.downloads ? downloadLinks(doc, base, rules.spec.downloads.types, limits.maxDownloads ?? 10) : [];
  return { links, nextPage, canonical, items, dropped, itemBytes: bytes, itemsCut: cut, cut: cutOf(dropped, cut), metadata, simhash: limits.similarity === false ? null : simhash(mainText(doc)), downloads };
}

const NO_ITEMS: ExtractedItems = { items: [], bytes: 0, cut: { overCount: 0, overBytes: 0 } };

/**
 * The URL this page is a duplicate of, or null when its items are its own. With the spec's
 * `honour_canonical`, a page is a duplicate when its rel=canonical (canonicalOf) names another URL —
 * neither the requested nor the final one — on the same host, that the job's rules would follow from
 * this page (trap guards, include/exclude patterns). Its items are then not extracted here: they are
 * the canonical page's, and the frontier requests that page (unless the job has already seen it), so
 * each item is extracted once, on the page the site calls its own. A canonical on another host, or
 * one the rules refuse, is not honoured: the job could not fetch it, and the items would be lost.
 * Decided from the page alone, so the worker needs no view of the job's seen set.
 */
export function duplicateOf(doc: Document, base: URL, url: string, finalUrl: string, rules: CrawlRules): string | null {
  if (!rules.spec.honour_canonical) return null;
  const canonical = canonicalOf(doc, base);
  if (canonical === null || canonical === url || canonical === normaliseUrlOrNull(finalUrl)) return null;
  if (hostOf(canonical) !== hostOf(url)) return null;
  return rules.check(canonical, url) === null ? canonical : null;
}

/**
 * The spec's selectors, XPaths, transforms and item schema, as the API checks them when a website
 * is saved (selector-check.ts, item-spec-check.ts): a
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
    refusal ??= itemSpecProblem(spec)?.message ?? null;
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
