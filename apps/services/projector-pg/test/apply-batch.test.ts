/**
 * applyBatch against a real Postgres: rows first seen are appended (COPY), rows that replace a
 * stored one are updated, and the result equals the pure model's whatever the batching.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { samples } from '@trawl/schemas';
import { createTestDatabase, type TestDatabase } from '@trawl/store/testing';
import { requireStack } from '@trawl/streams/testing';
import { decoded, syntheticCrawl } from '@trawl/streams/testing';
import { applyBatch, type BatchResult } from '../src/projector/apply-batch.ts';
import { InMemoryReadModel } from '../src/model/in-memory-model.ts';
import type { ProjectableEvent } from '../src/model/projectable-event.ts';
import { setupReadModels } from '../src/sql/read-model-setup.ts';
import { LIVE_TABLES } from '../src/sql/tables.ts';

const t = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s));

describe('applyBatch on Postgres', () => {
  let db: TestDatabase;

  beforeAll(async () => {
    await requireStack({ postgres: true });
    db = await createTestDatabase('trawl_test_apply');
    await setupReadModels(db.pool);
  });
  afterAll(async () => {
    await db?.drop();
  });

  async function apply(events: readonly ProjectableEvent[]): Promise<BatchResult> {
    const client = await db.pool.connect();
    try {
      await client.query('BEGIN');
      const result = await applyBatch(client, LIVE_TABLES, events);
      await client.query('COMMIT');
      return result;
    } catch (err) {
      await client.query('ROLLBACK');
      throw err;
    } finally {
      client.release();
    }
  }

  it('appends new rows, updates a fetch whose winner changes, and lets copies of applied events change nothing, across batches', async () => {
    const job_id = 'job-replace';
    const page = (event_id: string, at: number, bytes: number): ProjectableEvent => ({
      name: 'PageFetched',
      value: { ...samples.PageFetched, job_id, fetch_id: 'f1', event_id, occurred_at: t(at), bytes },
    });
    // An item's id is derived from its job and key (as the worker does), so a key seen again is a copy.
    const item = (item_key: string, at: number, title: string): ProjectableEvent => ({
      name: 'ItemExtracted',
      value: { ...samples.ItemExtracted, job_id, fetch_id: 'f1', item_key, event_id: `item-${item_key}`, occurred_at: t(at), fields: { title } },
    });
    await apply([page('e1', 1, 100), item('k1', 2, 'first')]);
    // The fetch ended twice under two event ids (a success after a failure, or a synthetic refetch): the later success wins.
    await apply([page('e3', 3, 300), item('k2', 5, 'other')]);

    const pages = await db.pool.query('SELECT fetch_id, bytes, event_id FROM job_pages WHERE job_id = $1', [job_id]);
    expect(pages.rows).toEqual([{ fetch_id: 'f1', bytes: 300, event_id: 'e3' }]);
    const job = await db.pool.query('SELECT pages_fetched, items_extracted, bytes, log_seq, updated_at FROM jobs WHERE job_id = $1', [job_id]);
    expect(job.rows[0]).toEqual({ pages_fetched: 1, items_extracted: 2, bytes: 300, log_seq: 2, updated_at: t(5) });
    // Pages and job events get a line, items none (the page line counts them).
    const log = await db.pool.query('SELECT seq, event_id FROM job_log WHERE job_id = $1 ORDER BY seq', [job_id]);
    expect(log.rows.map((r) => `${r.seq}:${r.event_id}`)).toEqual(['1:e1', '2:e3']);

    // Copies under new offsets, later and with other figures (a worker that fetched again after a
    // crash): the first occurrences stand, and nothing moves, updated_at included.
    const again = await apply([item('k1', 8, 'refetched'), page('e3', 9, 999), item('k2', 9, 'refetched')]);
    expect({ applied: again.applied, duplicates: again.duplicates, items: again.rows.items, log: again.rows.log }).toEqual({ applied: 0, duplicates: 3, items: 0, log: 0 });
    const items = await db.pool.query('SELECT item_key, fields, event_id FROM job_items WHERE job_id = $1 ORDER BY item_key', [job_id]);
    expect(items.rows).toEqual([
      { item_key: 'k1', fields: { title: 'first' }, event_id: 'item-k1' },
      { item_key: 'k2', fields: { title: 'other' }, event_id: 'item-k2' },
    ]);
    const after = await db.pool.query('SELECT items_extracted, bytes, log_seq, updated_at FROM jobs WHERE job_id = $1', [job_id]);
    expect(after.rows[0]).toEqual({ items_extracted: 2, bytes: 300, log_seq: 2, updated_at: t(5) });
  });

  it('stores crawled text holding NUL, which Postgres refuses in text and jsonb, without the NULs', async () => {
    const job_id = 'job-nul';
    const fields = { title: 'A\u0000B', 'back\\u0000slash': 'kept \\u0000 as written' };
    await apply([
      { name: 'PageFetched', value: { ...samples.PageFetched, job_id, fetch_id: 'f1', event_id: 'n1', occurred_at: t(1), url: 'https://nul.example/a', final_url: 'https://nul.example/a' } },
      { name: 'ItemExtracted', value: { ...samples.ItemExtracted, job_id, fetch_id: 'f1', item_key: 'k', event_id: 'n2', occurred_at: t(2), fields } },
    ]);
    const items = await db.pool.query('SELECT fields FROM job_items WHERE job_id = $1', [job_id]);
    expect(items.rows[0].fields).toEqual({ title: 'AB', 'back\\u0000slash': 'kept \\u0000 as written' });
  });

  it('stores a log line whose text holds NUL (from a server error message) without it', async () => {
    const job_id = 'job-nul-log';
    await apply([{ name: 'PageFailed', value: { ...samples.PageFailed, job_id, fetch_id: 'f1', event_id: 'n3', occurred_at: t(3), url: 'https://nul.example/b', error_message: 'bad\u0000body' } }]);
    const log = await db.pool.query('SELECT msg FROM job_log WHERE job_id = $1', [job_id]);
    expect(log.rows[0].msg).toContain('badbody');
    expect(log.rows[0].msg).not.toContain('\u0000');
  });

  it('equals the pure model for a crawl applied in batches of every size', async () => {
    const events: ProjectableEvent[] = syntheticCrawl({ jobs: 6, pagesPerJob: 25, seed: 5, runId: 'apply-batches' }).map(decoded);
    const sizes = [1, 7, 50, 3, 200];
    const model = new InMemoryReadModel();
    for (let i = 0, b = 0; i < events.length; b++) {
      const batch = events.slice(i, i + sizes[b % sizes.length]!);
      await apply(batch);
      model.apply(batch);
      i += batch.length;
    }
    const jobIds = [...model.jobs.keys()];
    const pages = await db.pool.query('SELECT job_id, fetch_id, event_id FROM job_pages WHERE job_id = ANY($1) ORDER BY job_id, fetch_id', [jobIds]);
    expect(pages.rows).toEqual([...model.pages.values()].map((p) => ({ job_id: p.job_id, fetch_id: p.fetch_id, event_id: p.event_id })).sort(byKey('fetch_id')));
    const items = await db.pool.query('SELECT job_id, item_key, event_id, fields FROM job_items WHERE job_id = ANY($1) ORDER BY job_id, item_key', [jobIds]);
    expect(items.rows).toEqual(
      [...model.items.values()].map((i) => ({ job_id: i.job_id, item_key: i.item_key, event_id: i.event_id, fields: i.fields })).sort(byKey('item_key')),
    );
    const jobs = await db.pool.query('SELECT job_id, pages_fetched, pages_failed, items_extracted, log_seq FROM jobs WHERE job_id = ANY($1) ORDER BY job_id', [jobIds]);
    expect(jobs.rows).toEqual(
      [...model.jobs.values()]
        .map((j) => ({ job_id: j.job_id, pages_fetched: j.pages_fetched, pages_failed: j.pages_failed, items_extracted: j.items_extracted, log_seq: j.log_seq }))
        .sort((a, b) => (a.job_id < b.job_id ? -1 : 1)),
    );
    const logged = await db.pool.query('SELECT count(*)::int AS n FROM job_log WHERE job_id = ANY($1)', [jobIds]);
    expect(logged.rows[0].n).toBe(model.log.length);
    expect(model.log.length).toBe(events.filter((e) => e.name !== 'ItemExtracted').length);
  });
});

function byKey<K extends string>(key: K) {
  return (a: { job_id: string } & Record<K, string>, b: { job_id: string } & Record<K, string>) =>
    a.job_id !== b.job_id ? (a.job_id < b.job_id ? -1 : 1) : a[key] < b[key] ? -1 : a[key] > b[key] ? 1 : 0;
}
