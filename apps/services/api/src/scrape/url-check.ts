/**
 * A scrape's or a map's URL must be one a crawl may reach (http/egress-url.ts), checked when the
 * request comes so the caller gets `URL_REFUSED` at once instead of a job whose only page fails.
 * The workers check again at every request and redirect. Names are remembered 30 s: scrapes come
 * often, and to the same hosts.
 */
import type { AddressPolicy } from '@trawl/crawl';
import { EgressUrlCheck } from '../http/egress-url.ts';

export class ScrapeUrlCheck extends EgressUrlCheck {
  constructor(policy?: AddressPolicy) {
    super({ code: 'URL_REFUSED', subject: 'url', credentials: 'a URL may not carry credentials; use `headers` or `cookies`' }, { ...(policy ? { policy } : {}), ttlMs: 30_000 });
  }
}
