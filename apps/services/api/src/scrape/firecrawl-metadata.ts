/**
 * A page's metadata in the shape of Firecrawl's `Document.metadata` (`DocumentMetadata` of
 * @mendable/firecrawl-js): `title`, `description`, `language`, the OpenGraph properties camel-cased
 * with a string each (`ogTitle`, `ogImage`, `ogSiteName`… the first value of a repeated one) but
 * `ogLocaleAlternate` a list, `publishedTime`/`modifiedTime`/`articleSection`/`articleTag` from the
 * `article:*` properties, every `og:*` and `twitter:*` property also under its own name as
 * Firecrawl sends them, and the fetch's `sourceURL`, `url`, `statusCode`, `contentType`,
 * `scrapeId`. Trawl's JSON-LD and microdata ride along as `jsonLd` and `microdata` (the type's
 * index signature admits them) when the page has any.
 */

/** What the metadata is made from: Trawl's stored `metadata` (or the scrape answer's), and the page's figures. */
export interface FirecrawlMetadataInput {
  readonly metadata: Readonly<Record<string, unknown>>;
  readonly sourceURL: string;
  readonly url: string;
  readonly statusCode: number;
  readonly contentType?: string | null | undefined;
  readonly scrapeId: string;
  readonly error?: string | undefined;
}

const ARTICLE: Readonly<Record<string, string>> = {
  'article:published_time': 'publishedTime',
  'article:modified_time': 'modifiedTime',
  'article:section': 'articleSection',
  'article:tag': 'articleTag',
};

const first = (v: unknown): string | undefined => (Array.isArray(v) ? (typeof v[0] === 'string' ? v[0] : undefined) : typeof v === 'string' ? v : undefined);

/** `og:site_name` → `ogSiteName`. */
export function camelProperty(name: string): string {
  return name.replace(/[:_](\w)/g, (_x, c: string) => c.toUpperCase());
}

export function firecrawlMetadata(input: FirecrawlMetadataInput): Record<string, unknown> {
  const m = input.metadata;
  const out: Record<string, unknown> = {};
  // Stored metadata has its groups; an answer made from the head scan alone has `social` (first values).
  const properties: Record<string, unknown> = { ...((m.social ?? {}) as object), ...((m.open_graph ?? {}) as object), ...((m.twitter ?? {}) as object) };
  for (const [name, value] of Object.entries(properties)) {
    if (name.startsWith('og:') || name.startsWith('twitter:')) out[name] = value;
    if (name === 'og:locale:alternate') out.ogLocaleAlternate = Array.isArray(value) ? value.filter((v) => typeof v === 'string') : [value].filter((v) => typeof v === 'string');
    else if (name.startsWith('og:')) {
      const v = first(value);
      if (v !== undefined) out[camelProperty(name)] = v;
    } else if (ARTICLE[name]) {
      const v = first(value);
      if (v !== undefined) out[ARTICLE[name]] = v;
    }
  }
  for (const key of ['title', 'description', 'language'] as const) {
    const v = first(m[key]);
    if (v) out[key] = v;
  }
  if (Array.isArray(m.json_ld) && m.json_ld.length > 0) out.jsonLd = m.json_ld;
  if (Array.isArray(m.microdata) && m.microdata.length > 0) out.microdata = m.microdata;
  out.sourceURL = input.sourceURL;
  out.url = input.url;
  out.statusCode = input.statusCode;
  if (input.contentType) out.contentType = input.contentType;
  out.scrapeId = input.scrapeId;
  if (input.error !== undefined) out.error = input.error;
  return out;
}
