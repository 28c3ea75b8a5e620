import { TrawlError } from '@trawl/schemas';

/**
 * Errors of the crawl package. Every error carries a stable `code` (it lands in PageFailed.error_code
 * and in the DLQ), a `retriable` flag that decides between a retry tier and giving up, and its `cause`.
 * Subclasses are named by consequence, so the worker never branches on message text.
 */
export abstract class CrawlError extends TrawlError {}

/** A job's spec cannot be used (e.g. an include pattern that is not a valid regex). Thrown once, when the rules are compiled at job start. */
export class InvalidSpecError extends CrawlError {
  readonly code = 'TRAWL_INVALID_SPEC';
  readonly retriable = false;
}

/** A setting from the environment cannot be used (e.g. a TRAWL_FETCH_ALLOW entry that is neither an address, a block nor a host name). Thrown at start, naming the setting and the value. */
export class InvalidConfigError extends CrawlError {
  readonly code = 'TRAWL_INVALID_CONFIG';
  readonly retriable = false;
}

/** The URL cannot be parsed, or its scheme is not http(s). */
export class InvalidUrlError extends CrawlError {
  readonly code = 'TRAWL_INVALID_URL';
  readonly retriable = false;
}

/**
 * The host resolves to an address the safety policy forbids (loopback, private, metadata…), checked
 * after DNS and on every redirect hop.
 *
 * Its `message` is the same for every refusal ({@link UnsafeAddressError.MESSAGE}): it reaches the tenant
 * (PageFailed, the job log, dead letters, webhook deliveries, API answers), and the address a name
 * resolved to or the range it fell in would let a tenant map the operator's internal DNS one refusal
 * at a time. What was refused and why — `detail`, `host`, `address` — is for the operator's log
 * ({@link unsafeAddressLogFields}), never for an event or an answer.
 */
export class UnsafeAddressError extends CrawlError {
  /** What a tenant is told of any egress refusal: no address, no range, no allow-list. */
  static readonly MESSAGE = 'refused: the address is not allowed (TRAWL_UNSAFE_ADDRESS)';
  readonly code = 'TRAWL_UNSAFE_ADDRESS';
  readonly retriable = false;
  constructor(
    /** Why, for the operator: the host, port, resolved address and the range that refused it. */
    readonly detail: string,
    readonly host: string,
    readonly address: string | null,
    options?: { cause?: unknown },
  ) {
    super(UnsafeAddressError.MESSAGE, options);
  }
}

/** The operator's side of a refusal, as structured log fields (`{ egress: { host, address, detail } }`); null for any other error. */
export function unsafeAddressLogFields(err: unknown): { egress: { host: string; address: string | null; detail: string } } | null {
  for (let e: unknown = err, i = 0; e && i < 5; e = (e as { cause?: unknown }).cause, i++) {
    if (e instanceof UnsafeAddressError) return { egress: { host: e.host, address: e.address, detail: e.detail } };
  }
  return null;
}

/** The host name does not resolve (NXDOMAIN). A temporary resolver failure is a {@link NetworkError} instead. */
export class DnsNotFoundError extends CrawlError {
  readonly code = 'TRAWL_DNS_NOT_FOUND';
  readonly retriable = false;
}

/** Connection refused/reset, socket closed early, a temporary DNS failure: worth another try later. */
export class NetworkError extends CrawlError {
  readonly code = 'TRAWL_NETWORK';
  readonly retriable = true;
}

/**
 * The host cannot take this fetch for a while (a Retry-After pause, or start spacing that puts it past
 * the limiter's wait threshold). Not a failure: the fetch is due again at `dueAt` (epoch ms), and the
 * worker parks it outside the consumer until then.
 */
export class HostBusyError extends CrawlError {
  readonly code = 'TRAWL_HOST_BUSY';
  readonly retriable = true;
  constructor(
    message: string,
    readonly dueAt: number,
  ) {
    super(message);
  }
}

/** The TLS handshake failed (bad or expired certificate, wrong name). Retrying will not fix a certificate. */
export class TlsError extends CrawlError {
  readonly code = 'TRAWL_TLS';
  readonly retriable = false;
}

/** A connect, headers, body or total deadline passed. Retried: slow hosts are often only busy. */
export class FetchTimeoutError extends CrawlError {
  readonly code = 'TRAWL_TIMEOUT';
  readonly retriable = true;
  constructor(
    message: string,
    readonly phase: 'connect' | 'headers' | 'body' | 'total' | 'navigation',
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** The caller aborted the fetch (shutdown, job cancelled). Retriable: the work was not done, not refused. */
export class FetchAbortedError extends CrawlError {
  readonly code = 'TRAWL_ABORTED';
  readonly retriable = true;
}

/** The body is over the size limit (by Content-Length, or while streaming, or after decompression) and the policy is to refuse. */
export class BodyTooLargeError extends CrawlError {
  readonly code = 'TRAWL_BODY_TOO_LARGE';
  readonly retriable = false;
  constructor(
    message: string,
    readonly limitBytes: number,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** More redirect hops than allowed. */
export class TooManyRedirectsError extends CrawlError {
  readonly code = 'TRAWL_TOO_MANY_REDIRECTS';
  readonly retriable = false;
}

/** A redirect leads back to a URL already in the chain. */
export class RedirectLoopError extends CrawlError {
  readonly code = 'TRAWL_REDIRECT_LOOP';
  readonly retriable = false;
}

/** A Content-Encoding we cannot decode, or a corrupt compressed body. */
export class ContentEncodingError extends CrawlError {
  readonly code = 'TRAWL_CONTENT_ENCODING';
  readonly retriable = false;
}

/**
 * The server answered with an error status. 5xx, 408 and 429 are retriable (the server may recover;
 * `retryAfterMs` says when it asked us to come back), every other 4xx is a fact about the URL.
 */
export class HttpStatusError extends CrawlError {
  readonly code = 'TRAWL_HTTP_STATUS';
  readonly retriable: boolean;
  constructor(
    message: string,
    readonly status: number,
    readonly retryAfterMs: number | null,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.retriable = isRetriableStatus(status);
  }
}

/** robots.txt could not be read (5xx or network): the whole origin waits, as RFC 9309 asks. */
export class RobotsUnavailableError extends CrawlError {
  readonly code = 'TRAWL_ROBOTS_UNAVAILABLE';
  readonly retriable = true;
}

/** robots.txt disallows the URL for our user agent. */
export class RobotsDisallowedError extends CrawlError {
  readonly code = 'TRAWL_ROBOTS_DISALLOWED';
  readonly retriable = false;
}

/** Chromium could not be launched or crashed; the page itself may be fine. */
export class BrowserError extends CrawlError {
  readonly code = 'TRAWL_BROWSER';
  readonly retriable = true;
}

/**
 * One of a render's browser actions (CrawlSpec.actions) failed: its selector never appeared, its
 * time limit ran out, its key is unknown, its sealed text would not open. The message names the
 * action by its index and type, never the text it types. The same actions on the same page would
 * fail again: not retried.
 */
export class ActionFailedError extends CrawlError {
  readonly code = 'TRAWL_ACTION_FAILED';
  readonly retriable = false;
  constructor(
    /** The action's index in the spec's list (0-based), or -1 for the list as a whole. */
    readonly index: number,
    readonly actionType: string,
    reason: string,
    options?: { cause?: unknown },
  ) {
    super(`${index >= 0 ? `actions[${index}] (${actionType})` : actionType} failed: ${reason}`, options);
  }
}

/**
 * A page's parse ran past its time limit (TRAWL_PARSE_TIMEOUT_MS) on a parse thread, which was
 * stopped: the page, not its host or the worker, is the problem (a selector whose cost grows with
 * this page, an HTML bomb). The same page would take as long again: not retried.
 */
export class ParseTimeoutError extends CrawlError {
  readonly code = 'TRAWL_PARSE_TIMEOUT';
  readonly retriable = false;
}

/** A page's parse used more memory than a parse thread may (TRAWL_PARSE_THREAD_MEMORY_MB), or crashed its thread. Not retried, for the same reason. */
export class ParseCrashedError extends CrawlError {
  readonly code = 'TRAWL_PARSE_CRASHED';
  readonly retriable = false;
}

/** The fetcher was used after close(). */
export class FetcherClosedError extends CrawlError {
  readonly code = 'TRAWL_FETCHER_CLOSED';
  readonly retriable = true;
}

export function isRetriableStatus(status: number): boolean {
  return status >= 500 || status === 408 || status === 429;
}

/** Whether an arbitrary thrown value should be retried. Unknown errors are retried: safer to try again than to drop. */
export function isRetriable(err: unknown): boolean {
  if (err instanceof CrawlError) return err.retriable;
  return true;
}

/** The code to record for any thrown value. */
export function errorCode(err: unknown): string {
  return err instanceof CrawlError ? err.code : 'TRAWL_UNEXPECTED';
}

/** A `{{name}}` placeholder in a start URL or selector has no value in the job's params. */
export class MissingParamError extends CrawlError {
  readonly code = 'TRAWL_MISSING_PARAM';
  readonly retriable = false;
  constructor(
    message: string,
    readonly param: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

/** A sitemap document is not one (malformed XML, or a root that is neither urlset nor sitemapindex). The reader skips it and says why; the crawl goes on. */
export class InvalidSitemapError extends CrawlError {
  readonly code = 'TRAWL_INVALID_SITEMAP';
  readonly retriable = false;
}

/**
 * A session's login did not work: the login page has no form, a credential does not open, the site
 * answered an error or the success rule did not hold. The message says which, never a value. The
 * same credentials would fail again: not retried, and the frontier fails the job LOGIN_FAILED.
 */
export class LoginFailedError extends CrawlError {
  readonly code = 'TRAWL_LOGIN_FAILED';
  readonly retriable = false;
}

/**
 * A re-extraction's page whose body is not in the content store: its source job kept none (no
 * `formats`, no `store_in_cache`, and no HTTP cache entry of the user), or it was deleted since.
 * A re-extraction never fetches, so the page fails for good: counted, and listed with this code.
 */
export class NotStoredError extends CrawlError {
  readonly code = 'TRAWL_NOT_STORED';
  readonly retriable = false;
}

/**
 * The answer was a block page, not the page (blocks/block-classifier.ts): a challenge, a captcha, a
 * body matching one of the spec's block_patterns, a body far smaller than the host's usual. Never
 * stored nor parsed. Retriable: the retry tiers try it again later, with back-off, on another
 * session or proxy when the job has them (`verdict.retireSession`: the session that met it is
 * spent). A page blocked on every attempt ends as PageFailed with this code, counted as blocked.
 */
export class BlockedError extends CrawlError {
  readonly code: string = 'TRAWL_BLOCKED';
  readonly retriable: boolean = true;
  constructor(
    message: string,
    /** Which rule (`challenge`, `captcha`, `pattern`, `small_body`, `login_wall`), why in words (never the body), and that the session is spent. */
    readonly verdict: { readonly rule: 'challenge' | 'captcha' | 'pattern' | 'small_body' | 'login_wall'; readonly reason: string; readonly retireSession: true },
    readonly status: number,
  ) {
    super(message);
  }
}

/**
 * A login wall (blocks/login-wall.ts: a 401, or a redirect to the site's login form) met by a job
 * that declares no `login`: nothing it can do gets past it, so it is not retried, and the page ends
 * PageFailed `TRAWL_LOGIN_REQUIRED` at once — counted as blocked, its message saying what to declare.
 * (A job with a login meets it when a session lost its login: a plain BlockedError, retried on a
 * fresh session.)
 */
export class LoginRequiredError extends BlockedError {
  override readonly code = 'TRAWL_LOGIN_REQUIRED';
  override readonly retriable = false;
}

/**
 * No HTTP exchange through an upstream proxy (proxy/): it refused or dropped the connection, timed
 * out, asked for credentials (407) or its SOCKS handshake failed. Retriable (the next attempt may
 * pick another proxy); counted towards benching the proxy. The message names the proxy by host and
 * port, never its credentials.
 */
export class ProxyConnectError extends CrawlError {
  readonly code = 'TRAWL_PROXY';
  readonly retriable = true;
}
