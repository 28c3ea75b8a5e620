import { describe, expect, it } from 'vitest';
import { HttpStatusError, RobotsDisallowedError } from '../errors.ts';
import { HttpFetcher } from '../fetch/http-fetcher.ts';
import { AddressPolicy } from '../safety/address-policy.ts';
import { SafeResolver } from '../safety/safe-resolver.ts';
import { testSpec } from '../rules/test-spec.ts';
import { fetchId } from '../url/normalise.ts';
import type { ProcessedPage } from './page-processor.ts';
import { itemExtractedBytes, pageFetchedBytes, RECORD_RESERVE_BYTES } from './event-bounds.ts';
import { pageEvents, pageFailedEvent } from './worker-events.ts';
import type { FetchWithSpec } from '../spec/spec-reference.ts';

const JOB = '6f1c2a4e-93b7-5d0a-8c1e-2b7f4d9a0e11';
const url = 'http://jobs.example/list';
const request: FetchWithSpec = {
  event_id: '0b6d9c1e-5a3f-5e7b-9c2d-000000000004',
  occurred_at: new Date(0),
  causation_id: null,
  job_id: JOB,
  fetch_id: fetchId(JOB, url),
  url,
  depth: 1,
  referrer: 'http://jobs.example/',
  spec: testSpec(),
  spec_hash: null,
  params: {},
  cached: null,
  user_id: null,
};
const page: ProcessedPage = {
  result: {
    url,
    finalUrl: `${url}?moved=1`,
    status: 200,
    contentType: 'text/html',
    bytes: 10,
    wireBytes: 5,
    fetchMs: 3,
    body: '<p>x</p>',
    isHtml: true,
    truncated: false,
    redirects: [url],
    retryAfterMs: null,
    charset: 'utf-8',
    renderMode: 'http',
  },
  links: ['http://jobs.example/a'],
  nextPage: 'http://jobs.example/list?page=2',
  items: [{ key: 'k1', index: 0, fields: { title: 'T' }, errors: [] }],
  parsed: true,
  cut: null,
};

describe('worker events', () => {
  it('builds PageFetched with a deterministic id from the fetch', () => {
    const a = pageEvents(request, page, 2, { now: new Date(1) }).fetched;
    const b = pageEvents(request, page, 2, { now: new Date(2) }).fetched;
    expect(a.event_id).toBe(b.event_id);
    expect(a).toMatchObject({ url, final_url: `${url}?moved=1`, depth: 1, links: ['http://jobs.example/a'], next_page: 'http://jobs.example/list?page=2', item_count: 1, links_dropped: 0, attempt: 2, causation_id: request.event_id, parsed: true });
  });

  it("carries a duplicate's canonical URL (null for a page that is its own)", () => {
    expect(pageEvents(request, page, 1).fetched.canonical_url).toBeNull();
    const duplicate: ProcessedPage = { ...page, items: [], canonical: 'http://jobs.example/list?sort=new' };
    expect(pageEvents(request, duplicate, 1).fetched).toMatchObject({ canonical_url: 'http://jobs.example/list?sort=new', item_count: 0 });
  });

  it('builds one ItemExtracted per item, id from the item key, caused by the page', () => {
    const { items, fetched } = pageEvents(request, page, 1);
    expect(items[0]).toMatchObject({ item_key: 'k1', fields: { title: 'T' }, truncated_fields: [], causation_id: fetched.event_id });
    expect(pageEvents(request, page, 1).items[0]!.event_id).toBe(items[0]!.event_id);
  });

  it('bounds the events to the limit it is given, and leaves small ones as they are', () => {
    const big: ProcessedPage = {
      ...page,
      links: Array.from({ length: 5_000 }, (_, i) => `http://jobs.example/${'l'.repeat(300)}/${i}`),
      items: [{ key: 'k1', index: 0, fields: Object.fromEntries(Array.from({ length: 50 }, (_, i) => [`f${i}`, '字'.repeat(16 * 1024)])), errors: [] }],
    };
    const bounded = pageEvents(request, big, 1, { maxEventBytes: 1_000_000 });
    expect(pageFetchedBytes(bounded.fetched) + RECORD_RESERVE_BYTES).toBeLessThanOrEqual(1_000_000);
    expect(bounded.fetched.links.length + bounded.fetched.links_dropped).toBe(5_000);
    expect(bounded.fetched.item_count).toBe(1);
    expect(itemExtractedBytes(bounded.items[0]!) + RECORD_RESERVE_BYTES).toBeLessThanOrEqual(1_000_000);
    expect(bounded.items[0]!.truncated_fields).toHaveLength(50);
    expect(pageEvents(request, page, 1, { maxEventBytes: 1_000_000, now: new Date(0) })).toEqual(pageEvents(request, page, 1, { now: new Date(0) }));
  });

  it('builds PageFailed with the error code and the HTTP status when there is one', () => {
    expect(pageFailedEvent(request, new HttpStatusError('HTTP 503', 503, 1000), 4)).toMatchObject({ status: 503, error_code: 'TRAWL_HTTP_STATUS', attempts: 4, render_mode: 'http' });
    expect(pageFailedEvent(request, new RobotsDisallowedError('no'), 1)).toMatchObject({ status: null, error_code: 'TRAWL_ROBOTS_DISALLOWED' });
    expect(pageFailedEvent(request, new Error('boom'), 1).error_code).toBe('TRAWL_UNEXPECTED');
    // Another package's coded error keeps its code (the producer refusing an event over its limit).
    expect(pageFailedEvent(request, Object.assign(new Error('too large'), { code: 'TRAWL_EVENT_TOO_LARGE' }), 1).error_code).toBe('TRAWL_EVENT_TOO_LARGE');
  });

  it('builds the PageFailed of a name that resolves to a private address without that address or its range: the tenant gets the code', async () => {
    const resolver = new SafeResolver(new AddressPolicy(), { resolve: async () => [{ address: '10.20.30.40', family: 4 }] });
    const fetcher = new HttpFetcher({ resolver });
    try {
      const err = await fetcher.fetch('http://intranet.example:8080/admin').catch((e: unknown) => e);
      const failed = pageFailedEvent(request, err, 1);
      expect(failed).toMatchObject({ error_code: 'TRAWL_UNSAFE_ADDRESS', error_message: 'refused: the address is not allowed (TRAWL_UNSAFE_ADDRESS)', status: null });
      expect(JSON.stringify(failed)).not.toMatch(/10\.20\.30\.40|10\.0\.0\.0\/8/);
    } finally {
      await fetcher.close();
    }
  });
});
