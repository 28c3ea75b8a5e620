/**
 * The spec of a re-extraction (`POST /jobs/:id/reextract`), a pure function of the source job's
 * spec (as its JobDispatched carried it, in the jobs read model) and the extraction rules asked.
 *
 * What is kept: the source's link rules and limits (so the job view reads like the source's), its
 * `honour_canonical`. What is replaced: the extraction rules the request gives (`item_root` or
 * `item_root_xpath`, `item_fields`, `item_schema`, `formats`, `only_main_content`); a rule the
 * request leaves out stays the source's. An item root is CSS or XPath, never both: giving one
 * root clears the source's other kind, so that switching a spec from CSS to XPath needs no `null`.
 * What is dropped: everything that would make a page go to the network — request and reach options
 * (headers, cookies, proxies, sessions, login, actions: the credentials among them sealed, and not
 * needed), the browser, sitemaps, downloads, the HTTP cache's reuse and storing — since a
 * re-extraction reads stored bodies only, and no credential of the source should travel with a job
 * that does not use it. Formats that need a browser (`screenshot`, `pdf`) cannot be made again from
 * a stored body and are left out.
 */
import { createHash } from 'node:crypto';
import type { CrawlSpec, ItemField } from '@trawl/schemas';

/** The extraction rules a re-extraction may change. */
export interface ReextractRules {
  readonly item_root?: string | null;
  readonly item_root_xpath?: string | null;
  readonly item_fields?: readonly ItemField[];
  /** A JSON Schema as the request gives it (an object), or as a spec carries it (its JSON text). */
  readonly item_schema?: object | string | null;
  readonly formats?: readonly string[];
  readonly only_main_content?: boolean;
}

/** Formats a stored HTML body gives again (`metadata`: its structured data, read by the parse); the others are a browser's. */
export const REEXTRACT_FORMATS = ['html', 'text', 'markdown', 'metadata'] as const;
const BROWSER_PAGINATION = new Set<CrawlSpec['pagination_type']>(['infinite_scroll', 'load_more']);

export function reextractionSpec(source: CrawlSpec, sourceJobId: string, rules: ReextractRules, maxPages: number): CrawlSpec {
  const formats = (rules.formats ?? source.formats).filter((f) => (REEXTRACT_FORMATS as readonly string[]).includes(f));
  const schema = rules.item_schema;
  return {
    ...source,
    item_root: rules.item_root !== undefined ? rules.item_root : rules.item_root_xpath ? null : source.item_root,
    item_root_xpath: rules.item_root_xpath !== undefined ? rules.item_root_xpath : rules.item_root ? null : (source.item_root_xpath ?? null),
    item_fields: rules.item_fields !== undefined ? [...rules.item_fields] : source.item_fields,
    // Specs carry a schema as JSON text, as a website's spec does (@trawl/store crawlSpec).
    item_schema: schema === undefined ? (source.item_schema ?? null) : schema === null || typeof schema === 'string' ? schema : JSON.stringify(schema),
    formats,
    only_main_content: rules.only_main_content ?? source.only_main_content ?? false,
    reextract_of: sourceJobId,
    max_pages: maxPages,
    // Nothing below is used by a job that fetches nothing; cleared so that none of it travels.
    requires_browser: false,
    pagination_type: BROWSER_PAGINATION.has(source.pagination_type) ? 'none' : source.pagination_type,
    load_more_selector: null,
    sitemap: 'skip',
    max_age: null,
    ignore_cache: false,
    store_in_cache: false,
    headers: {},
    user_agent: null,
    locale: null,
    cookies: {},
    proxies: [],
    proxy_rotation: 'round_robin',
    sessions: 0,
    actions: [],
    login: null,
    block_patterns: [],
    adaptive_throttle: false,
    downloads: null,
  };
}

/** The dedupe key of a re-extraction's rules: asking the same rules again within the TTL answers the same job. */
export function reextractKey(rules: ReextractRules): string {
  const canonical = JSON.stringify(rules, (_k, v: unknown) => (v && typeof v === 'object' && !Array.isArray(v) ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => a.localeCompare(b))) : v));
  return createHash('sha256').update(canonical).digest('hex');
}
