/**
 * A webhook URL must be one a crawl could reach (egress-url.ts), so a subscription cannot aim
 * Trawl's deliveries at its own network. Checked when a URL is saved; apps/services/webhooks checks
 * again at every delivery. Resolved afresh each time (no cache): a save is rare.
 */
import type { AddressPolicy } from '@trawl/crawl';
import { EgressUrlCheck } from './egress-url.ts';

export class WebhookUrlCheck extends EgressUrlCheck {
  constructor(policy?: AddressPolicy) {
    super({ code: 'WEBHOOK_URL_REFUSED', subject: 'webhook URL', credentials: 'a webhook URL may not carry credentials; sign with `secret`' }, { ...(policy ? { policy } : {}), ttlMs: 0 });
  }
}
