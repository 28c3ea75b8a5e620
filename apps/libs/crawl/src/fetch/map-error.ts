import { CrawlError, DnsNotFoundError, FetchAbortedError, FetchTimeoutError, NetworkError, TlsError } from '../errors.ts';

const TLS_CODES = /^(?:CERT_|ERR_TLS_|UNABLE_TO_|DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN|ERR_SSL_)/;

/**
 * One place that turns what undici, net, tls and zlib throw into the package's coded errors. Our own
 * errors thrown inside the socket lookup come back wrapped; they are unwrapped first.
 */
export function mapFetchError(err: unknown, url: string, deadlineExpired: boolean, caller: AbortSignal | undefined): CrawlError {
  const own = findCrawlError(err);
  if (own) return own;
  if (deadlineExpired && !caller?.aborted) return new FetchTimeoutError(`total deadline passed fetching ${url}`, 'total', { cause: err });
  if (caller?.aborted) return new FetchAbortedError(`fetch of ${url} aborted`, { cause: err });
  const code = errCode(err);
  switch (code) {
    case 'UND_ERR_CONNECT_TIMEOUT':
      return new FetchTimeoutError(`connect timeout: ${url}`, 'connect', { cause: err });
    case 'UND_ERR_HEADERS_TIMEOUT':
      return new FetchTimeoutError(`headers timeout: ${url}`, 'headers', { cause: err });
    case 'UND_ERR_BODY_TIMEOUT':
      return new FetchTimeoutError(`body timeout: ${url}`, 'body', { cause: err });
    case 'ENOTFOUND':
      return new DnsNotFoundError(`${url}: host does not resolve`, { cause: err });
  }
  if (code && TLS_CODES.test(code)) return new TlsError(`TLS failure (${code}) fetching ${url}`, { cause: err });
  return new NetworkError(`${code ?? (err instanceof Error ? err.message : String(err))} fetching ${url}`, { cause: err });
}

function findCrawlError(err: unknown): CrawlError | null {
  for (let e: unknown = err, i = 0; e && i < 5; e = (e as { cause?: unknown }).cause, i++) {
    if (e instanceof CrawlError) return e;
  }
  return null;
}

function errCode(err: unknown): string | null {
  for (let e: unknown = err, i = 0; e && i < 5; e = (e as { cause?: unknown }).cause, i++) {
    const c = (e as { code?: unknown }).code;
    if (typeof c === 'string' && c !== 'UND_ERR_SOCKET' && c !== 'UND_ERR_ABORTED') return c;
  }
  const c = (err as { code?: unknown })?.code;
  return typeof c === 'string' ? c : null;
}
