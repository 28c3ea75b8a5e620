/**
 * A URL the API is given to aim Trawl at (a webhook's, a scrape's or a map's) must be one a crawl
 * could reach: the same address policy (`TRAWL_FETCH_ALLOW`) and the same resolver as the
 * fetchers. The API resolves the name only; whoever sends to the URL later (the webhooks service,
 * the workers) checks again, since what a name resolves to may change.
 *
 * A refusal by the egress rules answers a generic message and the code: the address the name
 * resolved to and the range it fell in would let a tenant map internal DNS one request at a time.
 * They go to the request's log instead.
 */
import { AddressPolicy, SafeResolver, UnsafeAddressError, unsafeAddressLogFields, urlPort } from '@trawl/crawl';
import { ApiError, type ErrorCode } from '../errors.ts';

/** How one kind of URL is refused: its code, what the messages call it, what to do about credentials in it. */
export interface UrlRefusal {
  readonly code: ErrorCode;
  /** `webhook URL`, `url`. */
  readonly subject: string;
  /** The message for a URL with a user name or password in it. */
  readonly credentials: string;
}

export class EgressUrlCheck {
  private readonly resolver: SafeResolver;

  constructor(
    private readonly refusal: UrlRefusal,
    options: { readonly policy?: AddressPolicy; readonly ttlMs?: number } = {},
  ) {
    this.resolver = new SafeResolver(options.policy ?? AddressPolicy.fromEnv(), { ttlMs: options.ttlMs ?? 0 });
  }

  /** Throws the refusal's code saying why (an address crawls may not reach, a name that does not resolve); the detail of a refused address goes to `log`. */
  async check(raw: string, log?: { info(fields: object, message: string): void }): Promise<void> {
    const { code, subject } = this.refusal;
    const url = new URL(raw);
    if (url.username || url.password) throw new ApiError(code, this.refusal.credentials, { field: 'url' });
    const host = url.hostname.startsWith('[') ? url.hostname.slice(1, -1) : url.hostname;
    try {
      await this.resolver.resolve(host, urlPort(url));
    } catch (err) {
      const refused = unsafeAddressLogFields(err);
      if (refused) {
        log?.info(refused, `${subject} refused by the egress rules`);
        throw new ApiError(code, `${subject} ${UnsafeAddressError.MESSAGE}`, { field: 'url' });
      }
      throw new ApiError(code, `${subject} refused: ${(err as Error).message}`, { field: 'url', cause: err });
    }
  }
}
