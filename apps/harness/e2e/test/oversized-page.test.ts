/**
 * Issue 21 (invariant 8: no event exceeds the broker's size limit): a page whose events would be far
 * over Kafka's 1 MB `message.max.bytes` — three items of 50 fields of 16 Ki CJK characters each
 * (~2.4 MB an item) and 5,000 links of ~420 bytes (~2.1 MB) — is crawled by a real frontier, worker
 * and projector-pg. Every event must be under the producer's limit, nothing dead-lettered, the page
 * recorded whole (PageFetched with its links cut and counted, every item with its cut fields named),
 * and the read models' items equal to the job's counters.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { ItemExtracted, JobCompleted, PageFetched } from '@trawl/schemas';
import { DEFAULT_MAX_EVENT_BYTES, readTopics } from '@trawl/streams';
import { crawlSpec } from '@trawl/store';
import { Pipeline } from '../src/pipeline.ts';

const FIELDS = 50;
const FIELD_CHARS = 16 * 1024;
const ITEMS = 3;
const LINKS = 5_000;

let site: Server;
let origin: string;
const LONG_NAME = 'a_field_name_long_enough_that_fifty_of_them_fill_a_small_event_';
let pipeline: Pipeline | undefined;

function bigPage(): string {
  const field = (i: number, item: number) => `<p class="f${i}">${String.fromCodePoint(0x4e00 + item * 64 + i).repeat(FIELD_CHARS)}</p>`;
  const items = Array.from({ length: ITEMS }, (_, n) => `<div class="item">${Array.from({ length: FIELDS }, (_, i) => field(i, n)).join('')}</div>`).join('\n');
  const links = Array.from({ length: LINKS }, (_, i) => `<a href="/listing/${i}/${'abcdefghij'.repeat(40)}">${i}</a>`).join('\n');
  return `<!doctype html><html><head><meta charset="utf-8"><title>big</title></head><body>${items}\n${links}</body></html>`;
}

beforeAll(async () => {
  const html = Buffer.from(bigPage());
  // /mixed: a small item (one field present) before two whose 50 field names alone outgrow a small limit.
  const full = `<div class="item">${Array.from({ length: FIELDS }, (_, i) => `<p class="f${i}">v${i}</p>`).join('')}</div>`;
  const mixed = Buffer.from(`<!doctype html><html><body><div class="item"><p class="f0">small</p></div>${full}${full}<a href="/next">next</a></body></html>`);
  site = createServer((req, res) => {
    if (req.url === '/robots.txt') return void res.writeHead(404).end();
    const body = req.url === '/mixed' ? mixed : html;
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-length': String(body.length) }).end(body);
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => site?.close(resolve));
});
afterEach(async () => {
  await pipeline?.stop();
  pipeline = undefined;
});

describe('a page whose events would be over the broker limit', () => {
  it('is recorded whole, every event under the limit, no dead letter, job_items equal to the job counters', async () => {
    const p = (pipeline = await Pipeline.start());
    p.spawn('frontier');
    // The parse's own cap on a page's items (4 MiB) would keep one of the three; this test is about
    // the event bound, so the parse keeps them all.
    p.spawn('worker', { TRAWL_PARSE_MAX_ITEM_BYTES: String(16 * 1024 * 1024) });
    p.spawn('projector-pg');
    const jobId = randomUUID();
    const seed = `${origin}/big`;
    const spec = {
      ...crawlSpec(null, { depth: 0, max_pages: 10 }),
      item_root: 'div.item',
      item_fields: Array.from({ length: FIELDS }, (_, i) => ({ name: `f${i}`, selector: `p.f${i}`, attribute: null, xpath: null, transforms: [] })),
    };
    await p.producer.emit(
      'JobDispatched',
      { job_id: jobId, user_id: 'e2e', target_id: null, schedule_id: null, search_url: seed, start_urls: [seed], keywords: [], location: null, spec, attempt: 1, params: {} },
      { topic: p.topics.jobs },
    );
    const isJob = (v: unknown) => (v as { job_id: string }).job_id === jobId;
    const events = await p.waitFor((ev) => ev.some((e) => e.event.name === 'JobCompleted' && isJob(e.event.value)), 180_000, `JobCompleted of ${jobId}`);
    const mine = events.filter((e) => isJob(e.event.value));
    const fetched = mine.filter((e) => e.event.name === 'PageFetched').map((e) => e.event.value as PageFetched);
    const items = mine.filter((e) => e.event.name === 'ItemExtracted').map((e) => e.event.value as ItemExtracted);
    const done = mine.find((e) => e.event.name === 'JobCompleted')!.event.value as JobCompleted;

    // Recorded whole: the page fetched, not failed; every item there, every field named where it was cut.
    expect(mine.filter((e) => e.event.name === 'PageFailed')).toEqual([]);
    expect(fetched).toHaveLength(1);
    expect(fetched[0]!.item_count).toBe(ITEMS);
    expect(fetched[0]!.links.length + fetched[0]!.links_dropped).toBe(LINKS);
    expect(fetched[0]!.links_dropped).toBeGreaterThan(0);
    expect(items).toHaveLength(ITEMS);
    for (const item of items) {
      expect(Object.keys(item.fields)).toHaveLength(FIELDS);
      expect(item.truncated_fields).toHaveLength(FIELDS);
    }
    expect(done).toMatchObject({ outcome: 'finished', pages_fetched: 1, pages_failed: 0, items_extracted: ITEMS });

    // Every record on the pipeline's topics under the limit; nothing dead-lettered.
    const records = await readTopics(p.kafka, [...p.topics.events, p.topics.fetch, p.topics.fetchDlq]);
    const sizes = records.map((r) => (r.value?.length ?? 0) + (r.key?.length ?? 0));
    expect(Math.max(...sizes)).toBeLessThan(DEFAULT_MAX_EVENT_BYTES);
    expect(records.filter((r) => r.topic === p.topics.fetchDlq)).toEqual([]);

    // The read model agrees with the job's counters, once it has read all three topics: they are
    // projected in no fixed order, so the job can show finished before its last ~1 MB item is in.
    const deadline = Date.now() + 60_000;
    for (;;) {
      const { rows } = await p.db.pool.query<{ status: string; pages_fetched: number; items_extracted: number; job_items: number }>(
        `SELECT status, pages_fetched, items_extracted, (SELECT count(*)::int FROM job_items WHERE job_id = $1) AS job_items FROM jobs WHERE job_id = $1`,
        [jobId],
      ).catch(() => ({ rows: [] as never[] }));
      const row = rows[0];
      if (row?.status === 'finished' && (row.job_items === ITEMS || Date.now() > deadline)) {
        expect(row).toEqual({ status: 'finished', pages_fetched: 1, items_extracted: ITEMS, job_items: ITEMS });
        console.log(`OVERSIZED-PAGE ${JSON.stringify({ largestRecord: Math.max(...sizes), limit: DEFAULT_MAX_EVENT_BYTES, linksKept: fetched[0]!.links.length, linksDropped: fetched[0]!.links_dropped, items: items.length })}`);
        return;
      }
      if (Date.now() > deadline) throw new Error(`projector-pg did not show the job finished within 60 s: ${JSON.stringify(row)}`);
      await new Promise((r) => setTimeout(r, 500));
    }
  }, 300_000);

  it('fails whole, with no item written, when an event cannot be bounded under the limit', async () => {
    // 4 KiB: the first item fits, the next two cannot (their field names alone are over it).
    const p = (pipeline = await Pipeline.start({ env: { TRAWL_MAX_EVENT_BYTES: '4096', TRAWL_FETCH_RETRY_DELAYS_MS: '100,100,100' } }));
    p.spawn('frontier');
    p.spawn('worker');
    const jobId = randomUUID();
    const seed = `${origin}/mixed`;
    const spec = {
      ...crawlSpec(null, { depth: 0, max_pages: 10 }),
      item_root: 'div.item',
      item_fields: Array.from({ length: FIELDS }, (_, i) => ({ name: `${LONG_NAME}${i}`, selector: `p.f${i}`, attribute: null, xpath: null, transforms: [] })),
    };
    await p.producer.emit(
      'JobDispatched',
      { job_id: jobId, user_id: 'e2e', target_id: null, schedule_id: null, search_url: seed, start_urls: [seed], keywords: [], location: null, spec, attempt: 1, params: {} },
      { topic: p.topics.jobs },
    );
    const isJob = (v: unknown) => (v as { job_id: string }).job_id === jobId;
    const events = await p.waitFor((ev) => ev.some((e) => e.event.name === 'JobCompleted' && isJob(e.event.value)), 180_000, `JobCompleted of ${jobId}`);
    const mine = events.filter((e) => isJob(e.event.value));
    expect(mine.filter((e) => e.event.name === 'ItemExtracted')).toEqual([]);
    expect(mine.filter((e) => e.event.name === 'PageFetched')).toEqual([]);
    const failed = mine.filter((e) => e.event.name === 'PageFailed').map((e) => e.event.value as { error_code: string; error_message: string });
    expect(failed).toHaveLength(1);
    expect(failed[0]!.error_code).toBe('TRAWL_EVENT_TOO_LARGE');
    expect(failed[0]!.error_message).toMatch(/^ItemExtracted [0-9a-f-]{36} is \d+ bytes on .*trawl\.items, over the 4096-byte event limit/);
    expect((mine.find((e) => e.event.name === 'JobCompleted')!.event.value as JobCompleted)).toMatchObject({ pages_fetched: 0, pages_failed: 1, items_extracted: 0 });
    // Refused at once (not retriable): one dead letter, after one attempt.
    const dead = await readTopics(p.kafka, [p.topics.fetchDlq]);
    expect(dead).toHaveLength(1);
  }, 300_000);
});
