/**
 * HTTP validators (RFC 9110 §8.8): what a response says to tell a later request whether it changed.
 * The HTTP cache keeps a page's ETag and Last-Modified and sends them back as If-None-Match and
 * If-Modified-Since; a site that finds the page unchanged answers 304 without a body.
 *
 * Values are sent back exactly as the site wrote them (a server compares its own spelling, and RFC
 * 9110 §13.1.3 asks for Last-Modified to be echoed verbatim), so parsing here only decides whether a
 * value is usable: an ETag quoted (`"x"`, `W/"x"`) or, from servers that forget the quotes, a bare
 * token; a Last-Modified that is an HTTP date. Anything else — control characters, a header value
 * longer than a validator has reason to be, a date nobody can read — is dropped, so no crawled
 * header is ever written back into a request unchecked.
 */

export interface HttpValidators {
  readonly etag: string | null;
  readonly lastModified: string | null;
}

export const NO_VALIDATORS: HttpValidators = { etag: null, lastModified: null };

/** Longest validator kept: ETags are hashes or versions, dates are 29 characters. */
const MAX_VALIDATOR_LENGTH = 256;

const QUOTED_ETAG = /^(?:W\/)?"[\x21\x23-\x7e]*"$/;
const BARE_ETAG = /^[\x21\x23-\x2b\x2d-\x7e]+$/;

/** A usable ETag as the site wrote it, or null. */
export function parseEtag(raw: string | null | undefined): string | null {
  const v = raw?.trim();
  if (!v || v.length > MAX_VALIDATOR_LENGTH) return null;
  return QUOTED_ETAG.test(v) || BARE_ETAG.test(v) ? v : null;
}

/** HTTP dates: IMF-fixdate, the obsolete RFC 850 and asctime forms. Only the form is checked here; Date.parse checks the values. */
const HTTP_DATE = /^(?:[A-Z][a-z]{2}, \d{2} [A-Z][a-z]{2} \d{4} \d{2}:\d{2}:\d{2} GMT|[A-Z][a-z]+, \d{2}-[A-Z][a-z]{2}-\d{2} \d{2}:\d{2}:\d{2} GMT|[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d{2}:\d{2}:\d{2} \d{4})$/;

/** A usable Last-Modified as the site wrote it, or null. */
export function parseLastModified(raw: string | null | undefined): string | null {
  const v = raw?.trim();
  if (!v || v.length > MAX_VALIDATOR_LENGTH || !HTTP_DATE.test(v)) return null;
  return Number.isNaN(Date.parse(v)) ? null : v;
}

/** The validators of a response's headers (first value of each). */
export function validatorsOf(header: (name: string) => string | null): HttpValidators {
  return { etag: parseEtag(header('etag')), lastModified: parseLastModified(header('last-modified')) };
}

export function hasValidator(v: HttpValidators): boolean {
  return v.etag !== null || v.lastModified !== null;
}

/**
 * The conditional request headers for stored validators. Both are sent when both are known: a
 * server that implements If-None-Match uses it and ignores the date (RFC 9110 §13.2.2), one that
 * only knows dates still gets one. Stored values are checked again, as they come from an event.
 */
export function conditionalHeaders(stored: HttpValidators): Record<string, string> {
  const out: Record<string, string> = {};
  const etag = parseEtag(stored.etag);
  const lastModified = parseLastModified(stored.lastModified);
  if (etag) out['if-none-match'] = etag;
  if (lastModified) out['if-modified-since'] = lastModified;
  return out;
}

/**
 * What holds after a 304: the validators the 304 carries replace the stored ones, and those it
 * leaves out stay (RFC 9111 §4.3.4, "freshening stored responses").
 */
export function revalidated(stored: HttpValidators, response: HttpValidators): HttpValidators {
  return { etag: response.etag ?? stored.etag, lastModified: response.lastModified ?? stored.lastModified };
}
