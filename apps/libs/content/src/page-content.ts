/**
 * What a job asking for formats keeps of one page: the body as fetched, once, under its hash
 * (the page's content hash, whatever formats were asked), and each format asked for under the hash
 * of its own bytes — `html` is the body itself, `screenshot` and `pdf` the browser's captures as
 * they came (a format asked for that the fetch did not make is left out). Everything is stored before the caller produces
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
  readonly html: string;
  /** Where the page ended up: relative links in the derived formats resolve against it. */
  readonly finalUrl: string;
  /** What the browser made of the page (PNG, PDF), stored as they are when asked for. */
  readonly captures?: Partial<Readonly<Record<CapturedFormat, Uint8Array>>>;
}

const encoder = new TextEncoder();

export async function storePageContent(store: Pick<ContentStore, 'put'>, page: PageBody, formats: readonly ContentFormat[]): Promise<PageContent> {
  const raw = await store.put(encoder.encode(page.html), FORMAT_MEDIA_TYPES.html);
  let written = raw.written ? 1 : 0;
  const wanted = new Set(formats);
  const derived = wanted.has('text') || wanted.has('markdown') ? derivePage(page.html, page.finalUrl) : undefined;
  const out: StoredFormat[] = [];
  for (const format of CONTENT_FORMATS) {
    if (!wanted.has(format)) continue;
    if (format === 'html') {
      out.push({ format, hash: raw.hash, bytes: raw.bytes });
      continue;
    }
    // A capture the render did not make (a page fetched over HTTP, not HTML) is not listed.
    const bytes = format === 'screenshot' || format === 'pdf' ? page.captures?.[format] : encoder.encode(derived![format]);
    if (!bytes) continue;
    const put = await store.put(bytes, FORMAT_MEDIA_TYPES[format]);
    if (put.written) written++;
    out.push({ format, hash: put.hash, bytes: put.bytes });
  }
  return { contentHash: raw.hash, formats: out, written };
}
