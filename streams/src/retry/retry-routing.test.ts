import { describe, expect, it } from 'vitest';
import { NonRetriableError, RetriableError, UndecodableMessageError } from '../errors.ts';
import { routeDeferral, routeFailure } from './failure-route.ts';
import { retryTiers } from './retry-tiers.ts';
import { deadLetterFor, deferredRecordFor, retryRecordFor, type SourceMessage } from './dead-letter.ts';
import { attemptOf, dueAtOf, headerString, originOf, TRAWL_HEADERS, unfinishedOf } from './retry-headers.ts';

const tiers = retryTiers('trawl.fetch', [2000, 30000, 300000]);
const source: SourceMessage = {
  topic: 'trawl.fetch',
  partition: 3,
  offset: '41',
  key: Buffer.from('example.org'),
  value: Buffer.from([0, 0, 0, 0, 7, 1, 2, 3]),
  headers: { 'trawl-event': Buffer.from('FetchRequested') },
};

describe('routeFailure', () => {
  it('sends attempt n to tier n with its delay', () => {
    expect(routeFailure(new RetriableError('503'), 1, tiers, 1000)).toEqual({
      kind: 'retry-tier',
      tier: { topic: 'trawl.fetch.retry.1', delayMs: 2000 },
      tierNumber: 1,
      nextAttempt: 2,
      dueAt: 3000,
    });
    const third = routeFailure(new Error('socket hang up'), 3, tiers, 0);
    expect(third.kind === 'retry-tier' && third.tier.topic).toBe('trawl.fetch.retry.3');
  });

  it('dead-letters after the last tier', () => {
    expect(routeFailure(new RetriableError('503'), 4, tiers)).toEqual({ kind: 'dead-letter', reason: 'exhausted' });
  });

  it('dead-letters non-retriable errors at once', () => {
    expect(routeFailure(new NonRetriableError('404'), 1, tiers)).toEqual({ kind: 'dead-letter', reason: 'non-retriable' });
    expect(routeFailure(new UndecodableMessageError('bad'), 1, tiers)).toEqual({ kind: 'dead-letter', reason: 'non-retriable' });
    expect(routeFailure(Object.assign(new Error('x'), { retriable: false }), 2, tiers).kind).toBe('dead-letter');
  });

  it('retries in place when the consumer has no tiers', () => {
    expect(routeFailure(new Error('pg down'), 5, [])).toEqual({ kind: 'in-place', nextAttempt: 6 });
  });
});

describe('retry and dead-letter records', () => {
  it('forwards the original bytes with attempt, due time, error and origin headers', () => {
    const rec = retryRecordFor(source, 'trawl.fetch.retry.1', { attempt: 2, dueAt: 12345 }, new RetriableError('HTTP 503'));
    expect(rec.key).toBe(source.key);
    expect(rec.value).toBe(source.value);
    expect(attemptOf(rec.headers)).toBe(2);
    expect(dueAtOf(rec.headers)).toBe(12345);
    expect(headerString(rec.headers, TRAWL_HEADERS.errorClass)).toBe('RetriableError');
    expect(headerString(rec.headers, TRAWL_HEADERS.errorCode)).toBe('TRAWL_RETRIABLE');
    expect(headerString(rec.headers, TRAWL_HEADERS.errorMessage)).toBe('HTTP 503');
    expect(headerString(rec.headers, 'trawl-event')).toBe('FetchRequested');
    expect(originOf(rec.headers, { topic: 'x', partition: 0, offset: '0' })).toEqual({ topic: 'trawl.fetch', partition: 3, offset: '41' });
  });

  it('keeps the first origin through later tiers and into the dead-letter topic', () => {
    const tier1 = retryRecordFor(source, 'trawl.fetch.retry.1', { attempt: 2, dueAt: 1 }, new Error('a'));
    const inTier1: SourceMessage = { topic: 'trawl.fetch.retry.1', partition: 0, offset: '7', key: tier1.key as Buffer, value: tier1.value, headers: tier1.headers };
    const { record, deadLetter } = deadLetterFor(inTier1, { deadLetterTopic: 'trawl.fetch.dlq', reason: 'exhausted', attempts: 4, error: new TypeError('boom') }, 99);
    expect(record.topic).toBe('trawl.fetch.dlq');
    expect(record.value).toBe(source.value);
    expect(deadLetter.origin).toEqual({ topic: 'trawl.fetch', partition: 3, offset: '41' });
    expect(deadLetter.headers).toMatchObject({
      'trawl-original-topic': 'trawl.fetch',
      'trawl-original-partition': '3',
      'trawl-original-offset': '41',
      'trawl-error-class': 'TypeError',
      'trawl-error-message': 'boom',
      'trawl-attempts': '4',
      'trawl-dead-letter-reason': 'exhausted',
      'trawl-failed-at': '99',
    });
    expect(deadLetter.headers['trawl-due-at']).toBeUndefined();
    expect(deadLetter.headers['trawl-error-code']).toBeUndefined();
  });

  it('reads attempt 1 and no due time from a message without headers', () => {
    expect(attemptOf(undefined)).toBe(1);
    expect(dueAtOf({ 'trawl-due-at': Buffer.from('soon') })).toBeUndefined();
  });

  it('parks a deferral in the shortest tier that covers its wait, or the longest until its delay is up; in place without tiers', () => {
    expect(routeDeferral(1_500 + 1_000, tiers, 1_000)).toEqual({ tier: tiers[0], dueAt: 2_500 });
    expect(routeDeferral(1_000 + 20_000, tiers, 1_000)).toEqual({ tier: tiers[1], dueAt: 21_000 });
    expect(routeDeferral(1_000 + 600_000, tiers, 1_000)).toEqual({ tier: tiers[2], dueAt: 301_000 });
    expect(routeDeferral(5_000, [], 1_000)).toEqual({ tier: null, dueAt: 5_000 });
  });

  it('keeps the attempt, the deliveries without an outcome and the last failure when deferring, and counts the deferrals', () => {
    const failedBefore = retryRecordFor(source, tiers[0]!.topic, { attempt: 2, dueAt: 10, unfinished: 1 }, new Error('HTTP 503'));
    const onTier = { ...source, topic: tiers[0]!.topic, offset: '5', headers: failedBefore.headers };
    const once = deferredRecordFor(onTier, tiers[2]!.topic, { attempt: 2, dueAt: 99, unfinished: 1 });
    const twice = deferredRecordFor({ ...onTier, headers: once.headers }, tiers[2]!.topic, { attempt: 2, dueAt: 199, unfinished: 1 });
    expect(attemptOf(twice.headers)).toBe(2);
    expect(unfinishedOf(twice.headers)).toBe(1);
    expect(dueAtOf(twice.headers)).toBe(199);
    expect(headerString(twice.headers, TRAWL_HEADERS.errorMessage)).toBe('HTTP 503');
    expect(headerString(twice.headers, TRAWL_HEADERS.deferrals)).toBe('2');
    expect(originOf(twice.headers, { topic: 'x', partition: 0, offset: '0' })).toEqual({ topic: 'trawl.fetch', partition: 3, offset: '41' });
    expect(twice.value).toBe(source.value);
  });
});
