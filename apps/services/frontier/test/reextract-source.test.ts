/**
 * What a re-extraction reads of its source job, against the real Postgres: the source's fetched
 * pages as seeds (failed ones left out, URL order), and each request's stored body — the page's own,
 * else its user's HTTP cache entry, else none. The tables have the columns the frontier reads of
 * projector-pg's `job_pages` and `http_cache` (READ-MODEL.md); the whole path runs in
 * apps/harness/e2e/test/reextract.test.ts.
 */
import { fetchId } from '@trawl/crawl';
import { createTestDatabase, type TestDatabase } from '@trawl/store/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ReextractSource } from '../src/reextract-source.ts';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
  await db.pool.query(`CREATE TABLE job_pages (job_id text NOT NULL, fetch_id text NOT NULL, url text NOT NULL, final_url text, status int, content_type text,
    depth int NOT NULL, ok boolean NOT NULL, fetched_at timestamptz NOT NULL, content_hash text, etag text, last_modified text, PRIMARY KEY (job_id, fetch_id))`);
  await db.pool.query(`CREATE TABLE http_cache (user_id text NOT NULL, url text NOT NULL, final_url text NOT NULL, status int NOT NULL, content_type text,
    etag text, last_modified text, content_hash text NOT NULL, fetched_at timestamptz NOT NULL, PRIMARY KEY (user_id, url))`);
});
afterAll(async () => db?.drop());

const SOURCE = 'c0ffee00-0000-5000-8000-000000000001';
const at = new Date('2026-11-20T10:00:00.000Z');
const url = (p: string) => `http://site.test${p}`;

describe('ReextractSource', () => {
  it("seeds with the source's fetched pages at their depths, and finds each one's body: its own, else the user's HTTP cache entry, else none", async () => {
    const page = (p: string, depth: number, ok: boolean, hash: string | null) =>
      db.pool.query(`INSERT INTO job_pages VALUES ($1, $2, $3, $4, $5, 'text/html', $6, $7, $8, $9, '"e"', NULL)`, [SOURCE, fetchId(SOURCE, url(p)), url(p), `${url(p)}?final`, ok ? 200 : 404, depth, ok, at, hash]);
    await page('/b', 1, true, 'b'.repeat(64));
    await page('/', 0, true, 'a'.repeat(64));
    await page('/c', 1, true, null);
    await page('/d', 2, true, null);
    await page('/gone', 1, false, null);
    await db.pool.query(`INSERT INTO http_cache VALUES ('alice', $1, $1, 200, 'text/html', NULL, NULL, $2, $3), ('bob', $4, $4, 200, NULL, NULL, NULL, $2, $3)`, [url('/c'), 'c'.repeat(64), at, url('/d')]);
    const source = new ReextractSource(db.pool);

    expect(await source.seeds(SOURCE)).toEqual([{ url: url('/'), depth: 0 }, { url: url('/b'), depth: 1 }, { url: url('/c'), depth: 1 }, { url: url('/d'), depth: 2 }]);
    const bodies = await source.bodies(SOURCE, 'alice', [url('/'), url('/b'), url('/c'), url('/d')]);
    expect(bodies.get(url('/'))).toEqual({ content_hash: 'a'.repeat(64), fetched_at: at, final_url: `${url('/')}?final`, status: 200, content_type: 'text/html', etag: '"e"', last_modified: null });
    expect(bodies.get(url('/b'))?.content_hash).toBe('b'.repeat(64));
    expect(bodies.get(url('/c'))).toMatchObject({ content_hash: 'c'.repeat(64), final_url: url('/c') });
    // Another user's cache entry never serves alice's re-extraction.
    expect(bodies.has(url('/d'))).toBe(false);
    expect(await source.seeds('c0ffee00-0000-5000-8000-000000000002')).toEqual([]);
  });
});
