/**
 * What a job asking for formats keeps of one page: the body as fetched, once, under its hash
 * (the page's content hash, whatever formats were asked), and each format asked for under the hash
 * of its own bytes — `html` is the body itself, `screenshot` and `pdf` the browser's captures as
 * they came (a format asked for that the fetch did not make is left out). A document (a PDF page) is
 * stored as its bytes: it has no `html`, its `pdf` is itself, its text and markdown are the text
 * the parse step derived from it. Everything is stored before the caller produces
 * the PageFetched that names the hashes, so an event never points at an object not yet written.
 */
import type { ContentStore } from './content-store.ts';
import { derivePage } from './derive-formats.ts';
import { CONTENT_FORMATS, FORMAT_MEDIA_TYPES, type CapturedFormat, type ContentFormat } from './formats.ts';

export interface StoredFormat {
  readonly format: ContentFormat;
  readonly hash: string;
  /** Uncompressed size. */
  readonly bytes: number;
}

export interface PageContent {
  /** Hash of the body as fetched. */
  readonly contentHash: string;
  readonly formats: readonly StoredFormat[];
  /** Objects this call wrote (the rest were stored already). */
  readonly written: number;
}

export interface PageBody {
  /** The HTML as fetched ('' for a document). */
  readonly html: string;
  /** A page that is a document (a PDF), not HTML: its bytes are the body stored. */
  readonly document?: { readonly bytes: Uint8Array; readonly mediaType: string };
  /** Text and Markdown derived already (the worker's parse threads); absent: derived here from `html`. */
  readonly derived?: { readonly text: string; readonly markdown: string } | null;
  /** Derive from the main content only (CrawlSpec.only_main_content) when deriving here; default false. */
  readonly mainContent?: boolean;
  /** Where the page ended up: relative links in the derived formats resolve against it. */
  readonly finalUrl: string;
  /** What the browser made of the page (PNG, PDF), stored as they are when asked for. */
  readonly captures?: Partial<Readonly<Record<CapturedFormat, Uint8Array>>>;
  /** The page's structured data (the parse step's), stored as JSON when `metadata` is asked for. */
  readonly metadata?: unknown;
}

const encoder = new TextEncoder();

export async function storePageContent(store: Pick<ContentStore, 'put'>, page: PageBody, formats: readonly ContentFormat[]): Promise<PageContent> {
  const wanted = new Set(formats);
  const derived = page.derived ?? (!page.document && (wanted.has('text') || wanted.has('markdown')) ? derivePage(page.html, page.finalUrl, { mainContent: page.mainContent ?? false }) : undefined);
  // The body and every format of its own bytes, written side by side (each object is whole under
  // its hash or absent, so their order does not matter; all of them are done before this returns).
  const own: { format: ContentFormat; bytes: Uint8Array }[] = [];
  for (const format of CONTENT_FORMATS) {
    if (!wanted.has(format)) continue;
    // `html` is the body; a PDF page's `pdf` is the body itself.
    if (format === 'html' || (format === 'pdf' && page.document?.mediaType === 'application/pdf')) continue;
    // A capture the render did not make (a page fetched over HTTP, not HTML) is not listed.
    const bytes =
      format === 'screenshot' || format === 'pdf' ? page.captures?.[format] : format === 'metadata' ? (page.metadata == null ? undefined : encoder.encode(JSON.stringify(page.metadata))) : derived ? encoder.encode(derived[format as 'text' | 'markdown']) : undefined;
    if (bytes) own.push({ format, bytes });
  }
  const [raw, ...puts] = await Promise.all([
    page.document ? store.put(page.document.bytes, page.document.mediaType) : store.put(encoder.encode(page.html), FORMAT_MEDIA_TYPES.html),
    ...own.map((o) => store.put(o.bytes, FORMAT_MEDIA_TYPES[o.format])),
  ]);
  let written = raw!.written ? 1 : 0;
  const byFormat = new Map(own.map((o, i) => [o.format, puts[i]!]));
  const out: StoredFormat[] = [];
  for (const format of CONTENT_FORMATS) {
    if (!wanted.has(format)) continue;
    if (format === 'html' || (format === 'pdf' && page.document?.mediaType === 'application/pdf')) {
      // A document has no HTML.
      if (format === 'html' && page.document) continue;
      out.push({ format, hash: raw!.hash, bytes: raw!.bytes });
      continue;
    }
    const put = byFormat.get(format);
    if (!put) continue;
    if (put.written) written++;
    out.push({ format, hash: put.hash, bytes: put.bytes });
  }
  return { contentHash: raw!.hash, formats: out, written };
}
