/**
 * Webhook quota decisions, pure: may a user make one more subscription, may they ask for one more
 * test or re-delivery this hour (and, when not, how long until they may). The delivery budget's
 * own decisions (lease sizes, when a held delivery comes back) live with its counter in
 * apps/services/webhooks; both count over hourly-window.ts.
 */
import { roomAt, usedAt, type Bucket } from './hourly-window.ts';
import type { QuotaRefusal } from './quota-decision.ts';
import type { WebhookQuotaLimits } from './webhook-quota-limits.ts';

export type WebhookDecision = { readonly ok: true } | QuotaRefusal;

/** `live`: the user's subscriptions not deleted. */
export function decideWebhook(limits: WebhookQuotaLimits, live: number): WebhookDecision {
  if (live < limits.webhooks) return { ok: true };
  return {
    ok: false,
    limit: 'webhooks',
    value: limits.webhooks,
    used: live,
    message: `quota webhooks (${limits.webhooks}) reached: you have ${live} webhooks; delete one first`,
  };
}

/** `requests`: the user's test and re-delivery calls by minute; `now` on the same clock (epoch ms). */
export function decideWebhookRequest(limits: WebhookQuotaLimits, requests: readonly Bucket[], now: number): WebhookDecision {
  const limit = limits.webhook_tests_per_hour;
  const at = roomAt(requests, limit, now);
  if (at <= now) return { ok: true };
  const used = usedAt(requests, now);
  return {
    ok: false,
    limit: 'webhook_tests_per_hour',
    value: limit,
    used,
    retryAfterSeconds: Math.max(1, Math.ceil((at - now) / 1000)),
    message: `quota webhook_tests_per_hour (${limit}) reached: ${used} test and re-delivery calls in the last hour`,
  };
}
