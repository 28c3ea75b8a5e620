/**
 * A scrape's or a map's URL must be one a crawl may reach: the same address policy
 * (`TRAWL_FETCH_ALLOW`) and resolver as the fetchers, checked when the request comes so the caller
 * gets `URL_REFUSED` at once instead of a job whose only page fails. The API resolves the name
 * only; it never fetches the URL (the workers do, and check again at every request and redirect).
 *
 * A refusal answers the generic message: the address a name resolved to would let a tenant map
 * internal DNS one request at a time. The detail goes to the request's log.
 */
import { AddressPolicy, SafeResolver, UnsafeAddressError, unsafeAddressLogFields, urlPort } from '@trawl/crawl';
import { ApiError } from '../errors.ts';

export class EgressUrlCheck {
  private readonly resolver: SafeResolver;

  constructor(policy: AddressPolicy = AddressPolicy.fromEnv()) {
    this.resolver = new SafeResolver(policy, { ttlMs: 30_000 });
  }

  async check(raw: string, log?: { info(fields: object, message: string): void }): Promise<void> {
    const url = new URL(raw);
    if (url.username || url.password) throw new ApiError('URL_REFUSED', 'a URL may not carry credentials; use `headers` or `cookies`', { field: 'url' });
    const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    try {
      await this.resolver.resolve(host, urlPort(url));
    } catch (err) {
      const refusal = unsafeAddressLogFields(err);
      if (refusal) {
        log?.info(refusal, 'scrape URL refused by the egress rules');
        throw new ApiError('URL_REFUSED', `url ${UnsafeAddressError.MESSAGE}`, { field: 'url' });
      }
      throw new ApiError('URL_REFUSED', `url refused: ${(err as Error).message}`, { field: 'url', cause: err });
    }
  }
}
