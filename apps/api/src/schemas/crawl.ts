import { USER_ID_PATTERN, errorResponses } from './common.ts';

export const crawlBodySchema = {
  type: 'object',
  additionalProperties: false,
  required: ['start_urls', 'depth'],
  properties: {
    spider: { type: 'string', pattern: USER_ID_PATTERN, description: 'a website id whose selectors, pagination and politeness apply' },
    start_urls: {
      type: 'array',
      minItems: 1,
      maxItems: 100,
      items: { type: 'string', format: 'http-url', maxLength: 2048 },
      description: 'absolute http(s) URLs',
    },
    depth: { type: 'integer', minimum: 0, maximum: 10, description: 'link hops from a start URL; 0 fetches the start URLs only' },
    max_pages: { type: 'integer', minimum: 1, maximum: 100_000 },
    schedule_at: { type: 'string', format: 'date-time', description: 'run once at this time (with `interval`: start repeating then)' },
    interval: {
      type: 'string',
      minLength: 1,
      maxLength: 200,
      description: 'repeat: a cron expression (5 fields, or 6 with seconds; UTC) or a duration such as `30s`, `15m`, `2h`',
    },
    ignore_cache: { type: 'boolean', default: false, description: 'start a new job even if an identical one ran within the dedupe TTL' },
    params: {
      type: 'object',
      maxProperties: 50,
      propertyNames: { maxLength: 100 },
      additionalProperties: { type: 'string', maxLength: 2000 },
    },
  },
} as const;

export const crawlResponses = {
  200: {
    description: 'an immediate crawl: a new job, or (`cached: true`) an identical one from within the dedupe TTL',
    type: 'object',
    required: ['job_id', 'scheduled', 'cached'],
    properties: {
      job_id: { type: 'string', format: 'uuid' },
      scheduled: { type: 'boolean', enum: [false] },
      cached: { type: 'boolean' },
      cached_at: { type: 'string', format: 'date-time' },
      max_pages: { type: 'integer', description: "a new job's page budget: what it asked for, or what is left of the day's `pages_per_day` quota when that is less" },
    },
  },
  202: {
    description: 'a scheduled crawl; `job_id` is given for a one-shot `schedule_at`',
    type: 'object',
    required: ['schedule_id', 'scheduled', 'next_run'],
    properties: {
      schedule_id: { type: 'string' },
      job_id: { type: 'string', format: 'uuid' },
      scheduled: { type: 'boolean', enum: [true] },
      next_run: { type: 'string', format: 'date-time' },
    },
  },
  ...errorResponses('INVALID_JSON', 'INVALID_CRON', 'INTERVAL_TOO_SHORT', 'SCHEDULE_IN_PAST', 'UNKNOWN_SPIDER', 'QUOTA_EXCEEDED', 'BODY_TOO_LARGE', 'UNSUPPORTED_MEDIA_TYPE'),
} as const;
