/**
 * The event types a webhook may subscribe to. `page.changed` is accepted and stored so that
 * subscriptions can be made now; it fires once change tracking emits an event for it (none does
 * yet). `webhook.test` is what `POST /webhooks/:id/test` sends, to any subscription.
 */
export const WEBHOOK_EVENT_TYPES = ['job.started', 'job.completed', 'job.failed', 'job.cancelled', 'page.changed', 'items.extracted'] as const;

export type WebhookEventType = (typeof WEBHOOK_EVENT_TYPES)[number];

export const WEBHOOK_TEST_TYPE = 'webhook.test';

export const DELIVERY_STATUSES = ['pending', 'retrying', 'delivered', 'failed', 'requested', 'sending'] as const;

export type DeliveryStatus = (typeof DELIVERY_STATUSES)[number];
