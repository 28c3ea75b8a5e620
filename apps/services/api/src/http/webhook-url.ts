/**
 * A webhook URL must be one a crawl could reach: the same address policy (`TRAWL_FETCH_ALLOW`) and
 * the same resolver as the fetchers, so a subscription cannot aim Trawl's deliveries at its own
 * network. Checked when a URL is saved; apps/services/webhooks checks again at every delivery, since what a
 * name resolves to may change.
 *
 * A refusal by the egress rules answers a generic message and the code: the address the name
 * resolved to and the range it fell in would let a tenant map internal DNS one request at a time.
 * They go to the request's log instead.
 */
import { AddressPolicy, SafeResolver, UnsafeAddressError, unsafeAddressLogFields, urlPort } from '@trawl/crawl';
import { ApiError } from '../errors.ts';

export class WebhookUrlCheck {
  private readonly resolver: SafeResolver;

  constructor(policy: AddressPolicy = AddressPolicy.fromEnv()) {
    this.resolver = new SafeResolver(policy, { ttlMs: 0 });
  }

  /** Throws WEBHOOK_URL_REFUSED saying why (an address crawls may not reach, a name that does not resolve); the detail of a refused address goes to `log`. */
  async check(raw: string, log?: { info(fields: object, message: string): void }): Promise<void> {
    const url = new URL(raw);
    if (url.username || url.password) throw new ApiError('WEBHOOK_URL_REFUSED', 'a webhook URL may not carry credentials; sign with `secret`', { field: 'url' });
    const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    try {
      await this.resolver.resolve(host, urlPort(url));
    } catch (err) {
      const refusal = unsafeAddressLogFields(err);
      if (refusal) {
        log?.info(refusal, 'webhook URL refused by the egress rules');
        throw new ApiError('WEBHOOK_URL_REFUSED', `webhook URL ${UnsafeAddressError.MESSAGE}`, { field: 'url' });
      }
      throw new ApiError('WEBHOOK_URL_REFUSED', `webhook URL refused: ${(err as Error).message}`, { field: 'url', cause: err });
    }
  }
}
