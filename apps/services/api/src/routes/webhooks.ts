/**
 * Webhook subscriptions: CRUD, their deliveries (keyset-paged, newest first), re-delivery and a
 * test delivery. apps/services/webhooks does the sending; these routes only write what it reads.
 */
import type { FastifyPluginAsync } from 'fastify';
import { createWebhook, deleteWebhook, getWebhook, listDeliveries, listWebhooks, requestRedelivery, requestTestDelivery, updateWebhook, type NewWebhook, type WebhookPatch, type WebhookView } from '../data/webhooks.ts';
import { notFound } from '../errors.ts';
import { decodeCursor, encodeCursor } from '../http/cursor.ts';
import { WebhookUrlCheck } from '../http/webhook-url.ts';
import { errorResponses, uuidParams } from '../schemas/common.ts';
import { deliveryListQuery, webhookBody, webhookPatch } from '../schemas/webhooks.ts';
// Webhook limits (GET /quotas): subscriptions, and test/re-delivery calls an hour, checked and counted in the write's transaction.
import { admitWebhook, admitWebhookRequest, inTransaction } from '@trawl/store';

const deliveryParams = {
  type: 'object',
  required: ['id', 'delivery_id'],
  properties: { id: { type: 'string', format: 'uuid' }, delivery_id: { type: 'string', maxLength: 100 } },
} as const;

const webhooksRoutes: FastifyPluginAsync = async (fastify) => {
  const urls = new WebhookUrlCheck();
  const tags = ['webhooks'];
  const webhookView = { $ref: 'Webhook#' };
  const deliveryView = { $ref: 'Delivery#' };

  async function own(id: string, userId: string): Promise<WebhookView> {
    const w = await getWebhook(fastify.db, id, userId);
    if (!w) throw notFound('WEBHOOK_NOT_FOUND', id);
    return w;
  }

  fastify.post<{ Body: NewWebhook }>('/webhooks', {
    schema: { tags, summary: 'Subscribe a URL to events', body: webhookBody, response: { 201: webhookView, ...errorResponses('WEBHOOK_URL_REFUSED', 'QUOTA_EXCEEDED') } },
  }, async (request, reply) => {
    await urls.check(request.body.url, request.log);
    return reply.code(201).send(await inTransaction(fastify.db, async (tx) => {
      await admitWebhook(tx, request.userId, fastify.config.webhookQuotas);
      return createWebhook(tx, request.userId, request.body, fastify.secrets);
    }));
  });

  fastify.get('/webhooks', {
    schema: { tags, summary: "The caller's webhooks", response: { 200: { type: 'object', required: ['webhooks'], properties: { webhooks: { type: 'array', items: webhookView } } }, ...errorResponses() } },
  }, async (request) => ({ webhooks: await listWebhooks(fastify.db, request.userId) }));

  fastify.get<{ Params: { id: string } }>('/webhooks/:id', {
    schema: { tags, summary: 'One webhook (without its secret)', params: uuidParams, response: { 200: webhookView, ...errorResponses('WEBHOOK_NOT_FOUND') } },
  }, async (request) => own(request.params.id, request.userId));

  fastify.patch<{ Params: { id: string }; Body: WebhookPatch }>('/webhooks/:id', {
    schema: { tags, summary: 'Change a webhook (url, events, secret, filters, active)', params: uuidParams, body: webhookPatch, response: { 200: webhookView, ...errorResponses('WEBHOOK_NOT_FOUND', 'WEBHOOK_URL_REFUSED') } },
  }, async (request) => {
    await own(request.params.id, request.userId);
    if (request.body.url !== undefined) await urls.check(request.body.url, request.log);
    const w = await updateWebhook(fastify.db, request.params.id, request.userId, request.body, fastify.secrets);
    if (!w) throw notFound('WEBHOOK_NOT_FOUND', request.params.id);
    return w;
  });

  fastify.delete<{ Params: { id: string } }>('/webhooks/:id', {
    schema: { tags, summary: 'Delete a webhook (nothing more is sent to it)', params: uuidParams, response: { 204: { type: 'null', description: 'deleted' }, ...errorResponses('WEBHOOK_NOT_FOUND') } },
  }, async (request, reply) => {
    if (!(await deleteWebhook(fastify.db, request.params.id, request.userId))) throw notFound('WEBHOOK_NOT_FOUND', request.params.id);
    return reply.code(204).send();
  });

  fastify.get<{ Params: { id: string }; Querystring: { limit: number; cursor?: string; status?: string } }>('/webhooks/:id/deliveries', {
    schema: {
      tags,
      summary: "A webhook's deliveries, newest first: status, attempts, last error, next try",
      params: uuidParams,
      querystring: deliveryListQuery,
      response: { 200: { type: 'object', required: ['deliveries', 'next_cursor'], properties: { deliveries: { type: 'array', items: deliveryView }, next_cursor: { type: ['string', 'null'] } } }, ...errorResponses('WEBHOOK_NOT_FOUND') },
    },
  }, async (request) => {
    await own(request.params.id, request.userId);
    const after = decodeCursor(request.query.cursor);
    const deliveries = await listDeliveries(fastify.db, request.params.id, { limit: request.query.limit, ...(after ? { after } : {}), ...(request.query.status ? { status: request.query.status } : {}) });
    const last = deliveries[deliveries.length - 1];
    return { deliveries, next_cursor: deliveries.length === request.query.limit && last ? encodeCursor(last.sort_at, last.id) : null };
  });

  fastify.post<{ Params: { id: string; delivery_id: string } }>('/webhooks/:id/deliveries/:delivery_id/redeliver', {
    schema: { tags, summary: 'Send a delivery again (one attempt, same body and id)', params: deliveryParams, response: { 202: deliveryView, ...errorResponses('WEBHOOK_NOT_FOUND', 'DELIVERY_NOT_FOUND', 'QUOTA_EXCEEDED') } },
  }, async (request, reply) => {
    await own(request.params.id, request.userId);
    // A call for no delivery throws inside the transaction: it counts nothing.
    const d = await inTransaction(fastify.db, async (tx) => {
      await admitWebhookRequest(tx, request.userId, fastify.config.webhookQuotas);
      const found = await requestRedelivery(tx, request.params.id, request.params.delivery_id);
      if (!found) throw notFound('DELIVERY_NOT_FOUND', request.params.delivery_id);
      return found;
    });
    return reply.code(202).send(d);
  });

  fastify.post<{ Params: { id: string } }>('/webhooks/:id/test', {
    schema: { tags, summary: 'Send a `webhook.test` event (one attempt; see its delivery)', params: uuidParams, response: { 202: deliveryView, ...errorResponses('WEBHOOK_NOT_FOUND', 'QUOTA_EXCEEDED') } },
  }, async (request, reply) => {
    await own(request.params.id, request.userId);
    return reply.code(202).send(await inTransaction(fastify.db, async (tx) => {
      await admitWebhookRequest(tx, request.userId, fastify.config.webhookQuotas);
      return requestTestDelivery(tx, request.params.id);
    }));
  });
};

export default webhooksRoutes;
