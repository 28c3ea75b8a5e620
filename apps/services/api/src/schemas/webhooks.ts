/** Webhook subscriptions and deliveries: request bodies and views (also the OpenAPI document). */
import { WEBHOOK_EVENT_TYPES, DELIVERY_STATUSES } from '@trawl/store';
import { cursorProperty, limitProperty, nullableDate, nullableInteger, nullableString } from './common.ts';

const events = {
  type: 'array',
  minItems: 1,
  maxItems: WEBHOOK_EVENT_TYPES.length,
  items: { type: 'string', enum: WEBHOOK_EVENT_TYPES },
  description: '`page.changed` is accepted; it fires once change tracking lands (nothing emits it yet)',
} as const;

const secret = { type: 'string', minLength: 16, maxLength: 256, description: 'signs every delivery (`X-Trawl-Signature`); write-only, never returned' } as const;
const url = { type: 'string', format: 'http-url', maxLength: 2048 } as const;
const filterId = { type: ['string', 'null'], minLength: 1, maxLength: 200 } as const;

export const webhookBody = {
  type: 'object',
  additionalProperties: false,
  required: ['url', 'events', 'secret'],
  properties: {
    url,
    events,
    secret,
    job_id: { ...filterId, description: 'only events of this job' },
    schedule_id: { ...filterId, description: "only events of this schedule's jobs" },
    active: { type: 'boolean', default: true },
  },
} as const;

export const webhookPatch = {
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: webhookBody.properties,
} as const;

export const webhookView = {
  $id: 'Webhook',
  type: 'object',
  required: ['id', 'url', 'events', 'job_id', 'schedule_id', 'active', 'created_at', 'updated_at'],
  properties: {
    id: { type: 'string' },
    url: { type: 'string' },
    events: { type: 'array', items: { type: 'string' } },
    job_id: nullableString,
    schedule_id: nullableString,
    active: { type: 'boolean' },
    created_at: { type: 'string', format: 'date-time' },
    updated_at: { type: 'string', format: 'date-time' },
  },
} as const;

export const deliveryView = {
  $id: 'Delivery',
  type: 'object',
  required: ['id', 'event_id', 'type', 'job_id', 'status', 'attempts', 'last_error', 'last_status', 'next_attempt_at', 'created_at', 'delivered_at'],
  properties: {
    id: { type: 'string', description: 'the delivery (path of `…/redeliver`)' },
    event_id: { type: 'string', description: 'the body\'s `id` and `Idempotency-Key`' },
    type: { type: 'string' },
    job_id: nullableString,
    status: { type: 'string', enum: DELIVERY_STATUSES },
    attempts: { type: 'integer' },
    last_error: nullableString,
    last_status: { ...nullableInteger, description: "the receiver's last HTTP status" },
    next_attempt_at: nullableDate,
    created_at: { type: 'string', format: 'date-time' },
    delivered_at: nullableDate,
  },
} as const;

export const deliveryListQuery = {
  type: 'object',
  additionalProperties: false,
  properties: { limit: limitProperty, cursor: cursorProperty, status: { type: 'string', enum: DELIVERY_STATUSES } },
} as const;
