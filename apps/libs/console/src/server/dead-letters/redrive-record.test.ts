import { describe, expect, it } from 'vitest';
import { TRAWL_HEADERS } from '@trawl/streams';
import { toDeadLetter, type DeadLetterRecord } from './dead-letter-entry.ts';
import { redriveRecord, REDRIVE_HEADER } from './redrive-record.ts';

const key = Buffer.from('shop.example');
const value = Buffer.from([0, 0, 0, 0, 7, 1, 2, 3]);

/** A row of projector-pg's dead_letters, as the store reads it. */
const row: DeadLetterRecord = {
  id: 'fetch-3-17',
  source: 'fetch',
  topic: 'trawl.fetch.dlq',
  partition: 3,
  offset: '17',
  job_id: 'j-1',
  event: 'FetchRequested',
  url: 'https://shop.example/a',
  reason: 'exhausted',
  error_class: 'HttpStatusError',
  error_code: null,
  error_message: 'HTTP 503',
  attempts: 4,
  failed_at: new Date(1_795_000_000_000),
  origin_topic: 'trawl.fetch',
  origin_partition: 5,
  origin_offset: '99',
  key,
  value,
  headers: {
    [TRAWL_HEADERS.event]: 'FetchRequested',
    [TRAWL_HEADERS.originalTopic]: 'trawl.fetch',
    [TRAWL_HEADERS.originalPartition]: '5',
    [TRAWL_HEADERS.originalOffset]: '99',
    [TRAWL_HEADERS.attempt]: '4',
    [TRAWL_HEADERS.errorClass]: 'HttpStatusError',
    [TRAWL_HEADERS.errorMessage]: 'HTTP 503',
    [TRAWL_HEADERS.attempts]: '4',
    [TRAWL_HEADERS.deadLetterReason]: 'exhausted',
    [TRAWL_HEADERS.failedAt]: '1795000000000',
    'x-custom': 'kept',
  },
};

describe('dead letters', () => {
  const d = toDeadLetter(row);

  it('describe what failed, why, and where it was first read', () => {
    expect(d.view).toEqual({
      id: 'fetch-3-17',
      source: 'fetch',
      topic: 'trawl.fetch.dlq',
      partition: 3,
      offset: '17',
      origin: { topic: 'trawl.fetch', partition: 5, offset: '99' },
      reason: 'exhausted',
      error_class: 'HttpStatusError',
      error_code: null,
      error_message: 'HTTP 503',
      attempts: 4,
      failed_at: new Date(1_795_000_000_000).toISOString(),
      event: 'FetchRequested',
      job_id: 'j-1',
      url: 'https://shop.example/a',
      key: 'shop.example',
    });
  });

  it('an undecodable one shows no job and no event', () => {
    expect(toDeadLetter({ ...row, job_id: null, event: null, url: null }).view).toMatchObject({ job_id: null, event: null, url: null });
  });

  it('re-drive: the same bytes to the origin topic, as a first attempt, with where it came from', () => {
    const r = redriveRecord(d, new Set(['trawl.fetch']))!;
    expect(r.topic).toBe('trawl.fetch');
    expect(r.key).toBe(key);
    expect(r.value).toBe(value);
    expect(r.headers).toEqual({ [TRAWL_HEADERS.event]: 'FetchRequested', 'x-custom': 'kept', [REDRIVE_HEADER]: 'trawl.fetch.dlq/3/17' });
  });

  it('re-drive: never to a topic the header names but Trawl does not have', () => {
    expect(redriveRecord(d, new Set(['trawl.jobs']))).toBeUndefined();
  });
});
