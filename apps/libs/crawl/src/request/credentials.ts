/**
 * A spec's credentials arrive sealed (`tsec1.…`, @trawl/store/secrets seal-credentials.ts): header
 * values, cookie strings, proxies' usernames and passwords, login field values, actions' `text`.
 * Events, crawl_specs and the read models hold only the sealed form (invariant 10); the worker
 * opens each where it is sent, in memory.
 *
 * This package knows no key: the worker hands in a CredentialOpener built on its SecretBox
 * (TRAWL_SECRETS_KEY). Without one (unit tests, the in-memory bench) values are taken as they are.
 *
 * `openSpecCredentials` opens the request options — header values and cookie strings, which go with
 * every page, robots.txt and sitemap request — once per spec object (a job's spec is the same object
 * for all its pages in a worker's cache); the copy lives in the worker's memory only and is never
 * emitted, stored or logged. Proxies' credentials, login fields and actions' text stay sealed in it:
 * the proxy pool, the login and the browser actions open them where they use them (their `open`).
 */
import type { CrawlSpec } from '@trawl/schemas';
import { InvalidSpecError } from '../errors.ts';

export interface CredentialOpener {
  /** The clear value of a sealed credential; a value that is not sealed (a spec from before sealing) as it is. Throws when it does not open. */
  open(value: string): string;
  /**
   * A keyed fingerprint of a text holding credentials (HMAC under a key from configuration): what
   * cache keys built from credentials use instead of a bare hash.
   */
  fingerprint(text: string): string;
}

type CredentialSpec = Partial<Pick<CrawlSpec, 'headers' | 'cookies'>>;

const opened = new WeakMap<object, WeakMap<CredentialOpener, object>>();

/** `spec` with its headers and cookies clear (the same object when there is no opener or nothing to open). */
export function openSpecCredentials<T extends CredentialSpec>(spec: T, opener: CredentialOpener | undefined): T {
  if (!opener || !hasCredentials(spec)) return spec;
  let byOpener = opened.get(spec);
  if (!byOpener) opened.set(spec, (byOpener = new WeakMap()));
  let clear = byOpener.get(opener) as T | undefined;
  if (!clear) {
    clear = openAll(spec, opener);
    byOpener.set(opener, clear);
  }
  return clear;
}

function hasCredentials(spec: CredentialSpec): boolean {
  return Object.keys(spec.headers ?? {}).length > 0 || Object.keys(spec.cookies ?? {}).length > 0;
}

function openAll<T extends CredentialSpec>(spec: T, opener: CredentialOpener): T {
  // A value that does not open (sealed under a key this worker lacks) fails the page, not retried:
  // the message names where it sits, never what it holds.
  const open = (v: string, field: string) => {
    try {
      return opener.open(v);
    } catch (err) {
      throw new InvalidSpecError(`the crawl's ${field} is sealed and does not open with this worker's keys (TRAWL_SECRETS_KEY, TRAWL_SECRETS_OLD_KEYS)`, { cause: err });
    }
  };
  return {
    ...spec,
    ...(spec.headers ? { headers: Object.fromEntries(Object.entries(spec.headers).map(([k, v]) => [k, open(v, `header ${k}`)])) } : {}),
    ...(spec.cookies ? { cookies: Object.fromEntries(Object.entries(spec.cookies).map(([d, list]) => [d, list.map((c) => open(c, `cookie for ${d}`))])) } : {}),
  };
}
