import type { CrawlSpec } from '@trawl/schemas';
import { compileRules, type CrawlRules } from '../rules/crawl-rules.ts';
import { baseUrlOf } from './base-url.ts';
import { extractItems, type ExtractedItem } from './extract-items.ts';
import { extractLinks, type ExtractedLinks, type LinkLimits } from './extract-links.ts';
import { loadHtml } from './load-html.ts';
import { findNextPage } from './pagination.ts';

export interface ParseLimits extends LinkLimits {
  readonly maxItems: number;
}

export const DEFAULT_PARSE_LIMITS: ParseLimits = { maxLinks: 5_000, maxAnchors: 50_000, maxItems: 1_000 };

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
  readonly dropped: ExtractedLinks['dropped'];
  readonly itemsCapped: boolean;
}

export function parsePage(input: ParsePageInput): ParsedPage {
  const rules = input.rules ?? compileRules(requireSpec(input.spec));
  const limits = input.limits ?? DEFAULT_PARSE_LIMITS;
  const doc = loadHtml(input.html);
  const base = baseUrlOf(doc, input.finalUrl);
  const { links, dropped } = extractLinks(doc, base, input.url, rules, limits);
  const { items, capped } = extractItems(doc, rules.spec, base, input.url, limits.maxItems);
  const nextPage = findNextPage(doc, rules, base, input.url, items.length);
  return { links, nextPage, items, dropped, itemsCapped: capped };
}

function requireSpec(spec: CrawlSpec | undefined): CrawlSpec {
  if (!spec) throw new TypeError('parsePage needs rules or a spec');
  return spec;
}
