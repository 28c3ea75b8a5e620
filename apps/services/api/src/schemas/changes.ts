/** `GET /jobs/{id}/changes`: a run against the schedule's previous finished run, a re-extraction against its source, or any run against the job named by `against`. */
import { nullableString } from './common.ts';

const fields = { type: ['object', 'null'], additionalProperties: { type: 'string' } } as const;

export const pageChangeSchema = {
  $id: 'PageChange',
  type: 'object',
  required: ['url', 'fetch_id', 'content_hash', 'previous_fetch_id', 'previous_content_hash'],
  properties: {
    url: { type: 'string', description: 'the normalised requested URL: the page across runs' },
    fetch_id: { ...nullableString, description: "this run's fetch (null: gone)" },
    content_hash: nullableString,
    previous_fetch_id: { ...nullableString, description: "the previous run's fetch (null: new)" },
    previous_content_hash: nullableString,
  },
} as const;

export const itemChangeSchema = {
  $id: 'ItemChange',
  type: 'object',
  required: ['url', 'index', 'item_key', 'fields', 'previous_item_key', 'previous_fields'],
  properties: {
    url: { type: 'string', description: "the item's page" },
    index: { type: ['integer', 'null'], description: 'its position on the page (null when it cannot be recovered: fields cut to fit the event)' },
    item_key: { ...nullableString, description: "this run's item (null: removed)" },
    fields,
    previous_item_key: { ...nullableString, description: "the previous run's item (null: new)" },
    previous_fields: fields,
  },
} as const;

const list = (items: object, description: string) => ({ type: 'array', items, description }) as const;

export const jobChangesQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    limit: { type: 'integer', minimum: 1, maximum: 10_000, default: 1_000, description: 'entries listed per kind at most (the counts are whole); a list also stops at about 4 MiB of JSON; `truncated` says when a list was cut' },
    against: { type: 'string', format: 'uuid', description: "another of your jobs to compare with, whatever its schedule (e.g. the job a re-extraction fixed). Default: a re-extraction's source job, else the schedule's previous finished run" },
  },
} as const;

const pageChange = { $ref: 'PageChange#' } as const;
const itemChange = { $ref: 'ItemChange#' } as const;

export const jobChangesSchema = {
  $id: 'JobChanges',
  type: 'object',
  required: ['job_id', 'schedule_id', 'status', 'previous_job_id', 'settled', 'waiting_for', 'pages', 'items', 'truncated'],
  properties: {
    job_id: { type: 'string' },
    schedule_id: { ...nullableString, description: 'null for a job compared with `against` or with the job it re-extracted, when not a schedule\'s run' },
    status: { type: 'string', description: "this run's status: a running job's changes are those so far" },
    previous_job_id: { ...nullableString, description: 'the job compared with: `against`, else the job a re-extraction parsed again, else the schedule\'s latest run that finished before this one started; null for a schedule\'s first (every page and item is then new)' },
    settled: { type: 'boolean', description: 'false while projector-pg may still change the answer: an earlier run (or the job named) has not ended in the read model, or the previous run\'s pages are not all projected yet' },
    waiting_for: { type: 'array', items: { type: 'string' }, description: 'what an unsettled answer waits for' },
    pages: {
      type: 'object',
      required: ['counts', 'new', 'changed', 'gone', 'unchanged', 'unknown'],
      description: 'pages by normalised URL: `new` (fetched now, not before), `gone` (fetched before, not now: unlinked or failing), `changed` / `unchanged` (content hash differs / equals), `unknown` (in both, but a run kept no content hash: `formats` not asked, or not HTML)',
      properties: {
        counts: {
          type: 'object',
          required: ['new', 'changed', 'gone', 'unchanged', 'unknown'],
          properties: { new: { type: 'integer' }, changed: { type: 'integer' }, gone: { type: 'integer' }, unchanged: { type: 'integer' }, unknown: { type: 'integer' } },
        },
        new: list(pageChange, 'in URL order'),
        changed: list(pageChange, 'in URL order'),
        gone: list(pageChange, 'in URL order'),
        unchanged: list(pageChange, 'in URL order'),
        unknown: list(pageChange, 'in URL order'),
      },
    },
    items: {
      type: 'object',
      required: ['counts', 'new', 'changed', 'removed'],
      description: 'items by `item_key` (same key: unchanged, counted only), else by page and position: `changed` (same page and position, other fields), `new`, `removed`',
      properties: {
        counts: { type: 'object', required: ['new', 'changed', 'removed', 'unchanged'], properties: { new: { type: 'integer' }, changed: { type: 'integer' }, removed: { type: 'integer' }, unchanged: { type: 'integer' } } },
        new: list(itemChange, 'by page, then position'),
        changed: list(itemChange, 'by page, then position'),
        removed: list(itemChange, 'by page, then position'),
      },
    },
    truncated: { type: 'boolean', description: 'a list was cut (at `limit` entries or about 4 MiB) and holds fewer entries than its count: each list is the first of its kind in its order' },
  },
} as const;
