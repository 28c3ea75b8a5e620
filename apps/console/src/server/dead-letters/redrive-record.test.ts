import { describe, expect, it } from 'vitest';
import { TRAWL_HEADERS, type LoggedMessage } from '@trawl/streams';
import { toDeadLetter } from './dead-letter-entry.ts';
import { redriveRecord, REDRIVE_HEADER } from './redrive-record.ts';

const message: LoggedMessage = {
  topic: 'trawl.fetch.dlq',
  partition: 3,
  offset: '17',
  key: Buffer.from('shop.example'),
  value: Buffer.from([0, 0, 0, 0, 7, 1, 2, 3]),
  timestamp: '0',
  headers: {
    [TRAWL_HEADERS.event]: Buffer.from('FetchRequested'),
    [TRAWL_HEADERS.originalTopic]: Buffer.from('trawl.fetch'),
    [TRAWL_HEADERS.originalPartition]: Buffer.from('5'),
    [TRAWL_HEADERS.originalOffset]: Buffer.from('99'),
    [TRAWL_HEADERS.attempt]: Buffer.from('4'),
    [TRAWL_HEADERS.errorClass]: Buffer.from('HttpStatusError'),
    [TRAWL_HEADERS.errorMessage]: Buffer.from('HTTP 503'),
    [TRAWL_HEADERS.attempts]: Buffer.from('4'),
    [TRAWL_HEADERS.deadLetterReason]: Buffer.from('exhausted'),
    [TRAWL_HEADERS.failedAt]: Buffer.from('1795000000000'),
    'x-custom': Buffer.from('kept'),
  },
};

describe('dead letters', () => {
  const d = toDeadLetter('fetch', message, { name: 'FetchRequested', value: { job_id: 'j-1', url: 'https://shop.example/a' } });

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

  it('an undecodable one names no job, so it belongs to nobody', () => {
    expect(toDeadLetter('events', { ...message, headers: {} }, undefined).view).toMatchObject({ job_id: null, event: null, origin: { topic: 'trawl.fetch.dlq', partition: 3, offset: '17' } });
  });

  it('re-drive: the same bytes to the origin topic, as a first attempt, with where it came from', () => {
    const r = redriveRecord(d, new Set(['trawl.fetch']))!;
    expect(r.topic).toBe('trawl.fetch');
    expect(r.key).toBe(message.key);
    expect(r.value).toBe(message.value);
    expect(r.headers).toEqual({ [TRAWL_HEADERS.event]: 'FetchRequested', 'x-custom': 'kept', [REDRIVE_HEADER]: 'trawl.fetch.dlq/3/17' });
  });

  it('re-drive: never to a topic the header names but Trawl does not have', () => {
    expect(redriveRecord(d, new Set(['trawl.jobs']))).toBeUndefined();
  });
});
