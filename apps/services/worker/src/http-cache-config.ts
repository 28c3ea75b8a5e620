/**
 * TRAWL_HTTP_CACHE: `on` (default) or `off`. Off, the worker stores no page body for the HTTP cache
 * and ignores the cache entries its requests carry (no reuse within max_age, no conditional
 * request): for an operator who runs without object storage, or does not want to pay a store per
 * page. Bodies of jobs that ask for formats are stored either way.
 */
import { InvalidConfigError } from '@trawl/crawl';

export function httpCacheEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  const raw = (env.TRAWL_HTTP_CACHE ?? '').trim().toLowerCase();
  if (raw === 'on' || raw === '') return true;
  if (raw === 'off') return false;
  throw new InvalidConfigError(`TRAWL_HTTP_CACHE must be "on" or "off", got "${env.TRAWL_HTTP_CACHE}"`);
}
