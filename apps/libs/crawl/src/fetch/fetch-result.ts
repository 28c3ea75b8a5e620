import type { RenderMode } from '@trawl/schemas';
import type { HttpValidators } from '../cache/validators.ts';
import type { PageCaptures } from './browser-work.ts';

/**
 * What one fetch produced, HTTP or browser alike. Field names follow the code style; the worker maps
 * them onto PageFetched (`final_url`, `content_type`, `fetch_ms`, …).
 */
export interface FetchResult {
  /** The URL asked for. */
  readonly url: string;
  /** Where the redirects ended. */
  readonly finalUrl: string;
  readonly status: number;
  readonly contentType: string | null;
  /** Decoded body bytes received (for a non-HTML type: Content-Length when known, else what was read before stopping). */
  readonly bytes: number;
  /** Bytes on the wire, before decompression. */
  readonly wireBytes: number;
  readonly fetchMs: number;
  /** Body text, only for HTML (or for any type when `accept: 'text'`); null otherwise. */
  readonly body: string | null;
  /** The decoded body's bytes, only when asked for (`accept: 'bytes'`). */
  readonly data?: Uint8Array;
  /** True when the body is HTML and should be parsed. */
  readonly isHtml: boolean;
  /** The body was cut at the size limit (oversize policy 'truncate'). */
  readonly truncated: boolean;
  /** Every URL that answered with a redirect, in order (empty without redirects). */
  readonly redirects: readonly string[];
  /** Retry-After of a 429/503, in milliseconds. */
  readonly retryAfterMs: number | null;
  /** The encoding the body was decoded with. */
  readonly charset: string | null;
  readonly renderMode: RenderMode;
  /** The final response's ETag and Last-Modified, usable ones only (the HTTP fetcher's; absent: none). */
  readonly validators?: HttpValidators;
  /** What a render made besides the HTML, as the job's formats and actions asked (a screenshot, a PDF); browser only. */
  readonly captures?: PageCaptures;
}
