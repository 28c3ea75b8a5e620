/**
 * One delivery attempt over HTTP. Every socket goes through @trawl/crawl's safe resolver and pinned
 * connector — the crawls' egress rules (`TRAWL_FETCH_ALLOW`), checked at each attempt since a name
 * may resolve elsewhere than when the webhook was saved, and connected to the address checked.
 * Redirects are not followed (a 3xx is a failure): a receiver cannot bounce a delivery elsewhere.
 */
import { Agent, request } from 'undici';
import { AddressPolicy, pinnedConnector, SafeResolver, UnsafeAddressError, unsafeAddressLogFields } from '@trawl/crawl';
import { signatureHeader } from './signature.ts';

export interface SendResult {
  readonly ok: boolean;
  /** The receiver's status, when it answered. */
  readonly status?: number;
  readonly error?: string;
  /** The egress rules refuse the URL: no later attempt will do better. */
  readonly refused?: boolean;
  /**
   * Why the egress rules refused it (host, resolved address, range): for the operator's log only.
   * `error` — what the tenant sees in the delivery — says just "refused" and the code.
   */
  readonly egress?: { readonly host: string; readonly address: string | null; readonly detail: string };
}

export interface Delivery {
  readonly url: string;
  readonly secret: string;
  /** The body's `id`: the `Idempotency-Key`. */
  readonly eventId: string;
  readonly type: string;
  readonly deliveryId: string;
  readonly body: string;
}

export class HttpSender {
  private readonly agent: Agent;

  constructor(
    private readonly timeoutMs: number,
    policy: AddressPolicy = AddressPolicy.fromEnv(),
  ) {
    const resolver = new SafeResolver(policy);
    this.agent = new Agent({ connect: pinnedConnector(resolver, { timeout: timeoutMs }), headersTimeout: timeoutMs, bodyTimeout: timeoutMs, keepAliveTimeout: 4_000 });
  }

  async send(d: Delivery): Promise<SendResult> {
    try {
      const res = await request(d.url, {
        method: 'POST',
        dispatcher: this.agent,
        signal: AbortSignal.timeout(this.timeoutMs),
        headers: {
          'content-type': 'application/json',
          'user-agent': 'Trawl-Webhooks/1',
          'idempotency-key': d.eventId,
          'x-trawl-event': d.type,
          'x-trawl-delivery': d.deliveryId,
          'x-trawl-signature': signatureHeader(d.secret, d.body),
        },
        body: d.body,
      });
      await res.body.dump({ limit: 64 * 1024 }).catch(() => undefined);
      if (res.statusCode >= 200 && res.statusCode < 300) return { ok: true, status: res.statusCode };
      return { ok: false, status: res.statusCode, error: `receiver answered ${res.statusCode}` };
    } catch (err) {
      const e = err as Error & { code?: string; cause?: Error & { code?: string } };
      const code = e.code ?? e.cause?.code;
      const refusal = unsafeAddressLogFields(err);
      if (refusal) return { ok: false, refused: true, error: UnsafeAddressError.MESSAGE, egress: refusal.egress };
      return { ok: false, refused: code === 'TRAWL_UNSAFE_ADDRESS', error: `${code ? `${code}: ` : ''}${e.message}`.slice(0, 500) };
    }
  }

  async close(): Promise<void> {
    await this.agent.close();
  }
}
