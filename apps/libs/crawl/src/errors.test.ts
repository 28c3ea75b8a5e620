import { describe, expect, it } from 'vitest';
import * as errors from './errors.ts';
import { CrawlError, errorCode, isRetriable, isRetriableStatus } from './errors.ts';

/** Every concrete error class, constructed with plausible arguments. */
const catalogue: CrawlError[] = [
  new errors.InvalidSpecError('x'),
  new errors.InvalidConfigError('x'),
  new errors.InvalidUrlError('x'),
  new errors.UnsafeAddressError('x', 'h', '10.0.0.1'),
  new errors.DnsNotFoundError('x'),
  new errors.NetworkError('x'),
  new errors.TlsError('x'),
  new errors.FetchTimeoutError('x', 'total'),
  new errors.FetchAbortedError('x'),
  new errors.BodyTooLargeError('x', 1),
  new errors.TooManyRedirectsError('x'),
  new errors.RedirectLoopError('x'),
  new errors.ContentEncodingError('x'),
  new errors.HttpStatusError('x', 503, null),
  new errors.RobotsUnavailableError('x'),
  new errors.RobotsDisallowedError('x'),
  new errors.BrowserError('x'),
  new errors.FetcherClosedError('x'),
  new errors.MissingParamError('x', 'q'),
  new errors.HostBusyError('x', 0),
  new errors.InvalidSitemapError('x'),
  new errors.ParseTimeoutError('x'),
  new errors.ParseCrashedError('x'),
  new errors.LoginFailedError('x'),
  new errors.NotStoredError('x'),
  new errors.BlockedError('x', { rule: 'captcha', reason: 'x', retireSession: true }, 200),
  new errors.LoginRequiredError('x', { rule: 'login_wall', reason: 'x', retireSession: true }, 200),
  new errors.ActionFailedError(2, 'click', 'x'),
  new errors.ProxyConnectError('x'),
];

describe('error catalogue', () => {
  it('covers every exported error class', () => {
    const classes = Object.values(errors).filter((v) => typeof v === 'function' && v.prototype instanceof CrawlError);
    expect(catalogue.map((e) => e.constructor).sort((a, b) => a.name.localeCompare(b.name))).toEqual(classes.sort((a, b) => a.name.localeCompare(b.name)));
  });

  it('gives each class a unique TRAWL_ code, a retriable flag and its own name', () => {
    const codes = catalogue.map((e) => e.code);
    expect(new Set(codes).size).toBe(codes.length);
    for (const e of catalogue) {
      expect(e.code).toMatch(/^TRAWL_[A-Z_]+$/);
      expect(typeof e.retriable).toBe('boolean');
      expect(e.name).toBe(e.constructor.name);
      expect(e).toBeInstanceOf(Error);
    }
  });

  it('retries what may recover and not what will not', () => {
    const retriable = Object.fromEntries(catalogue.map((e) => [e.code, e.retriable]));
    expect(retriable).toMatchObject({
      TRAWL_NETWORK: true,
      TRAWL_TIMEOUT: true,
      TRAWL_ROBOTS_UNAVAILABLE: true,
      TRAWL_UNSAFE_ADDRESS: false,
      TRAWL_BODY_TOO_LARGE: false,
      TRAWL_REDIRECT_LOOP: false,
      TRAWL_INVALID_URL: false,
      TRAWL_ROBOTS_DISALLOWED: false,
      TRAWL_PARSE_TIMEOUT: false,
      TRAWL_PARSE_CRASHED: false,
      TRAWL_BLOCKED: true,
      TRAWL_LOGIN_REQUIRED: false,
    });
  });

  it('classifies HTTP statuses: 5xx, 408, 429 retriable; other 4xx not', () => {
    for (const s of [500, 502, 503, 504, 408, 429]) expect(isRetriableStatus(s), String(s)).toBe(true);
    for (const s of [400, 401, 403, 404, 410, 451]) expect(isRetriableStatus(s), String(s)).toBe(false);
    expect(new errors.HttpStatusError('x', 404, null).retriable).toBe(false);
  });

  it('keeps the cause, and treats unknown errors as retriable', () => {
    const cause = new Error('root');
    expect(new errors.NetworkError('x', { cause }).cause).toBe(cause);
    expect(isRetriable(new Error('?'))).toBe(true);
    expect(errorCode(new Error('?'))).toBe('TRAWL_UNEXPECTED');
  });
});
