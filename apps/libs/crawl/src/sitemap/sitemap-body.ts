import zlib from 'node:zlib';
import { InvalidSitemapError } from '../errors.ts';

/** A sitemap's text, decompressed when it is a gzip file, bounded in decompressed bytes. */
export interface SitemapBody {
  readonly text: string;
  /** The decompressed document was longer than the limit: `text` is its first `maxBytes`. */
  readonly cut: boolean;
  /** Bytes of XML (or text) read, after decompression. */
  readonly bytes: number;
}

/**
 * The document's text from the bytes the fetcher returned (its Content-Encoding already decoded, and
 * bounded by the same limit). A `.gz` sitemap is a gzip file whatever its headers say, so it is told
 * by its magic bytes, not by its name or type, and inflated here — by chunks, stopping at `maxBytes`:
 * a gzip bomb (kilobytes that inflate to gigabytes) costs at most the limit. A gzip stream that is
 * corrupt or ends early gives what inflated before the damage and an InvalidSitemapError.
 */
export async function sitemapBody(data: Uint8Array, maxBytes: number): Promise<SitemapBody & { readonly error: InvalidSitemapError | null }> {
  if (!isGzip(data)) {
    const cut = data.length > maxBytes;
    const kept = cut ? data.subarray(0, maxBytes) : data;
    return { text: utf8(kept), cut, bytes: kept.length, error: null };
  }
  const inflated = await gunzipBounded(data, maxBytes);
  return { text: utf8(inflated.data), cut: inflated.cut, bytes: inflated.data.length, error: inflated.error };
}

export function isGzip(data: Uint8Array): boolean {
  return data.length >= 2 && data[0] === 0x1f && data[1] === 0x8b;
}

function utf8(data: Uint8Array): string {
  // A cut may fall inside a character: the decoder replaces the broken tail, it does not throw.
  return new TextDecoder('utf-8').decode(data);
}

function gunzipBounded(data: Uint8Array, maxBytes: number): Promise<{ data: Buffer; cut: boolean; error: InvalidSitemapError | null }> {
  return new Promise((resolve) => {
    const gunzip = zlib.createGunzip({ finishFlush: zlib.constants.Z_SYNC_FLUSH, chunkSize: 64 * 1024 });
    const chunks: Buffer[] = [];
    let size = 0;
    let settled = false;
    const settle = (cut: boolean, error: InvalidSitemapError | null) => {
      if (settled) return;
      settled = true;
      resolve({ data: Buffer.concat(chunks, size), cut, error });
    };
    gunzip.on('data', (chunk: Buffer) => {
      if (settled) return;
      const room = maxBytes - size;
      if (chunk.length > room) {
        chunks.push(chunk.subarray(0, room));
        size = maxBytes;
        settle(true, null);
        gunzip.destroy();
        return;
      }
      chunks.push(chunk);
      size += chunk.length;
    });
    gunzip.on('end', () => settle(false, null));
    gunzip.on('error', (err) => settle(false, new InvalidSitemapError(`corrupt gzip sitemap: ${err.message}`, { cause: err })));
    gunzip.end(data);
  });
}
