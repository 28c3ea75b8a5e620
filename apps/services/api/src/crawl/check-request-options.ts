/**
 * Request options checked where they are configured — a website, `POST /crawl`, a schedule's
 * request — by the workers' own rules (`@trawl/crawl` checkRequestOptions), so that what the API
 * accepts is what a worker sends. A refusal is a 400 with the problem's code; its message names
 * the field, never a value (cookies are credentials).
 */
import { checkReachOptions, checkRequestOptions, type ReachOptionsCode, type ReachOptionsInput, type RequestOptions, type RequestOptionsCode } from '@trawl/crawl';
import { ApiError, type ErrorCode } from '../errors.ts';

const CODES: Readonly<Record<RequestOptionsCode, ErrorCode>> = {
  HEADER_NOT_ALLOWED: 'HEADER_NOT_ALLOWED',
  INVALID_HEADER: 'INVALID_HEADER',
  REQUEST_OPTIONS_TOO_LARGE: 'REQUEST_OPTIONS_TOO_LARGE',
  INVALID_LOCALE: 'INVALID_LOCALE',
  INVALID_COOKIE: 'INVALID_COOKIE',
  COOKIE_DOMAIN_NOT_CRAWLED: 'COOKIE_DOMAIN_NOT_CRAWLED',
};

/** Throws the ApiError of the first problem of `options`; `hosts`: what the crawl fetches from (start URLs, base URL, allowed_hosts). */
export function checkOptions(options: RequestOptions, hosts: readonly string[], prefix = ''): void {
  const problem = checkRequestOptions(options, hosts, prefix);
  if (problem) throw new ApiError(CODES[problem.code], problem.message, { field: problem.field });
}

/** The hosts of URLs (unparsable ones left out: the schema refuses them) and host names as given. */
export function hostsOf(urls: readonly string[], names: readonly string[] = []): string[] {
  const hosts = urls.flatMap((u) => {
    try {
      return [new URL(u).hostname.toLowerCase()];
    } catch {
      return [];
    }
  });
  return [...new Set([...hosts, ...names.map((n) => n.trim().toLowerCase()).filter((n) => n !== '')])];
}

const REACH_CODES: Readonly<Record<ReachOptionsCode, ErrorCode>> = {
  INVALID_LOGIN: 'INVALID_LOGIN',
  LOGIN_NEEDS_SESSIONS: 'LOGIN_NEEDS_SESSIONS',
  VALIDATION_FAILED: 'VALIDATION_FAILED',
  INVALID_PROXY: 'INVALID_PROXY',
  PROXY_NOT_ALLOWED: 'PROXY_NOT_ALLOWED',
  ACTIONS_TOO_MANY: 'ACTIONS_TOO_MANY',
  INVALID_ACTION: 'INVALID_ACTION',
  UNSUPPORTED_SELECTOR: 'UNSUPPORTED_SELECTOR',
  UNSUPPORTED_PATTERN: 'UNSUPPORTED_PATTERN',
};

/** Throws the ApiError of the first problem of the reach options (proxies, sessions, login, actions, block patterns, link rules). */
export function checkReach(options: ReachOptionsInput, prefix = ''): void {
  const problem = checkReachOptions(options, { prefix });
  if (!problem) return;
  throw new ApiError(REACH_CODES[problem.code], problem.message, { field: problem.field });
}
