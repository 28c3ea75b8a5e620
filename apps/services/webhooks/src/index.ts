/** @trawl/webhooks: the service, and what a receiver (or a test) needs to check a delivery. */
export { startWebhookService, type WebhookService, type WebhookServiceOptions } from './webhook-service.ts';
export { signatureHeader, verifySignature, SIGNATURE_HEADER } from './signature.ts';
export { webhookConfigFromEnv, DEFAULT_WEBHOOK_CONFIG, type WebhookConfig } from './config.ts';
export type { DeliveryBody } from './event-payload.ts';
