import { SaxesParser } from 'saxes';
import { InvalidSitemapError } from '../errors.ts';

/** What one sitemap document lists: page URLs (a urlset, or a text sitemap) or further sitemaps (an index). */
export interface ParsedSitemap {
  readonly kind: 'urlset' | 'sitemapindex' | 'text';
  /** `<loc>`s in document order, as written (not yet normalised or filtered), at most `maxLocs`. */
  readonly locs: readonly string[];
  /** `<loc>`s past `maxLocs`, counted, not kept. */
  readonly locsOver: number;
  /**
   * Why the document stops being readable (malformed XML, a cut document ends mid-element), or null.
   * The locs read before it are kept: a sitemap cut at its byte limit still gives its first URLs.
   */
  readonly error: InvalidSitemapError | null;
}

export interface ParseSitemapOptions {
  /** Locs kept; the rest are counted. A sitemap holds at most 50,000 (sitemaps.org). */
  readonly maxLocs?: number;
  /** Characters parsed between two yields to the event loop: a 50 MB document must not block it. */
  readonly chunkChars?: number;
}

/** A `<loc>` longer than this is no URL a crawl would request (trap guards stop far shorter ones); its text is not kept. */
const MAX_LOC_CHARS = 8 * 1024;

/**
 * Reads a sitemap (sitemaps.org 0.9): `<urlset>` of `<url><loc>`, `<sitemapindex>` of
 * `<sitemap><loc>`, or a text sitemap (one URL a line). The XML is checked as it is read (saxes, a
 * strict, streaming parser): a document that is not well-formed, or whose root is another element,
 * ends with an InvalidSitemapError naming the line, and nothing is thrown — the caller keeps what was
 * read and says why the rest was not. Elements are matched by local name, so a prefixed namespace
 * (`<sm:loc>`) reads the same; extensions (image:, news:) are ignored.
 *
 * The text is fed in chunks with a yield between them, so parsing a document at the byte limit
 * never blocks the worker's event loop for long (its watchdog kills a blocked process).
 */
export async function parseSitemap(text: string, options: ParseSitemapOptions = {}): Promise<ParsedSitemap> {
  const maxLocs = options.maxLocs ?? 50_000;
  const chunkChars = options.chunkChars ?? 256 * 1024;
  const start = text.charCodeAt(0) === 0xfeff ? 1 : 0;
  const first = text.slice(start, start + 1024).trimStart();
  if (first === '' && text.trim() === '') return { kind: 'urlset', locs: [], locsOver: 0, error: new InvalidSitemapError('not a sitemap: the document is empty') };
  if (first !== '' && !first.startsWith('<')) return parseTextSitemap(text.slice(start), maxLocs);

  const locs: string[] = [];
  let locsOver = 0;
  let kind: 'urlset' | 'sitemapindex' | null = null;
  let inEntry = false;
  let inLoc = false;
  let loc = '';
  let depth = 0;
  const parser = new SaxesParser({ position: true });
  const fail = (message: string): never => {
    throw new InvalidSitemapError(`${message} (line ${parser.line})`);
  };
  parser.on('error', (err) => fail(`malformed XML: ${err.message.replace(/^.*?\d+:\d+: /, '')}`));
  parser.on('opentag', (tag) => {
    const name = localName(tag.name);
    depth++;
    if (depth === 1) {
      if (name !== 'urlset' && name !== 'sitemapindex') fail(`not a sitemap: the root element is <${tag.name}>, not <urlset> or <sitemapindex>`);
      kind = name as 'urlset' | 'sitemapindex';
    } else if (depth === 2) {
      inEntry = name === (kind === 'urlset' ? 'url' : 'sitemap');
    } else if (depth === 3 && inEntry && name === 'loc') {
      inLoc = true;
      loc = '';
    }
  });
  const onText = (t: string) => {
    if (inLoc && loc.length <= MAX_LOC_CHARS) loc += t;
  };
  parser.on('text', onText);
  parser.on('cdata', onText);
  // A loc counts when its entry closes: what a malformed entry holds is not taken.
  let entryLoc: string | null = null;
  parser.on('closetag', (tag) => {
    if (depth === 3 && inLoc && localName(tag.name) === 'loc') {
      inLoc = false;
      const value = loc.trim();
      if (value !== '' && value.length <= MAX_LOC_CHARS) entryLoc = value;
    } else if (depth === 2) {
      if (inEntry && entryLoc !== null) {
        if (locs.length < maxLocs) locs.push(entryLoc);
        else locsOver++;
      }
      inEntry = false;
      entryLoc = null;
    }
    depth--;
  });

  try {
    for (let i = start; i < text.length; i += chunkChars) {
      parser.write(text.slice(i, i + chunkChars));
      if (i + chunkChars < text.length) await new Promise<void>((resolve) => setImmediate(resolve));
    }
    parser.close();
    if (kind === null) fail('not a sitemap: no root element');
  } catch (err) {
    if (!(err instanceof InvalidSitemapError)) throw err;
    return { kind: kind ?? 'urlset', locs, locsOver, error: err };
  }
  return { kind: kind!, locs, locsOver, error: null };
}

function parseTextSitemap(text: string, maxLocs: number): ParsedSitemap {
  const locs: string[] = [];
  let locsOver = 0;
  for (const line of text.split(/\r?\n/)) {
    const value = line.trim();
    if (!/^https?:\/\//i.test(value) || value.length > MAX_LOC_CHARS) continue;
    if (locs.length < maxLocs) locs.push(value);
    else locsOver++;
  }
  return { kind: 'text', locs, locsOver, error: null };
}

function localName(name: string): string {
  const colon = name.indexOf(':');
  return colon === -1 ? name : name.slice(colon + 1);
}
