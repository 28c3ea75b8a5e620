/**
 * The frontier's HTTP cache lookup against the real Postgres: entries found by user and URL (never
 * another user's), and a lookup that cannot be made — the read model not created yet — sends the
 * requests without entries instead of failing the batch. The table here has the columns the
 * frontier reads of projector-pg's `http_cache` (READ-MODEL.md); the whole path, projector-pg
 * included, runs in apps/harness/e2e/test/recrawl.test.ts.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase, type TestDatabase } from '@trawl/store/testing';
import { testLogger } from '@trawl/streams/testing';
import { Registry } from 'prom-client';
import { HttpCacheReader, cacheKey } from '../src/http-cache-reader.ts';

let db: TestDatabase;
const logger = testLogger('frontier-http-cache');
beforeAll(async () => {
  db = await createTestDatabase();
});
afterAll(async () => db?.drop());

const URL_A = 'https://shop.example/a';
const URL_B = 'https://shop.example/b';

describe('the HTTP cache lookup', () => {
  it('sends requests without entries, and counts an error, while the read model does not exist', async () => {
    const metrics = new Registry();
    const reader = new HttpCacheReader(db.pool, logger, metrics);
    expect(await reader.lookup([{ userId: 'alice', url: URL_A }])).toEqual(new Map());
    expect(await metrics.getSingleMetricAsString('trawl_frontier_cache_lookups_total')).toMatch(/result="error"} 1/);
  });

  it("finds each request's entry by its user and URL, and never another user's", async () => {
    await db.pool.query(`CREATE TABLE http_cache (
      user_id text NOT NULL, url text NOT NULL, final_url text NOT NULL, status int NOT NULL, content_type text,
      etag text, last_modified text, content_hash text NOT NULL, fetched_at timestamptz NOT NULL,
      job_id text NOT NULL, fetch_id text NOT NULL, event_id text NOT NULL, PRIMARY KEY (user_id, url))`);
    const at = new Date('2026-11-20T10:00:00.000Z');
    await db.pool.query(
      `INSERT INTO http_cache VALUES ($1, $2, $2, 200, 'text/html', '"a1"', NULL, $3, $4, 'j1', 'f1', 'e1'), ($5, $6, $6, 200, NULL, NULL, 'Fri, 20 Nov 2026 09:00:00 GMT', $3, $4, 'j2', 'f2', 'e2')`,
      ['alice', URL_A, 'a'.repeat(64), at, 'bob', URL_B],
    );
    const metrics = new Registry();
    const found = await new HttpCacheReader(db.pool, logger, metrics).lookup([
      { userId: 'alice', url: URL_A },
      { userId: 'alice', url: URL_B },
      { userId: 'bob', url: URL_A },
    ]);
    expect([...found.keys()]).toEqual([cacheKey('alice', URL_A)]);
    expect(found.get(cacheKey('alice', URL_A))).toEqual({
      content_hash: 'a'.repeat(64), fetched_at: at, final_url: URL_A, status: 200, content_type: 'text/html', etag: '"a1"', last_modified: null,
    });
    const counts = await metrics.getSingleMetricAsString('trawl_frontier_cache_lookups_total');
    expect(counts).toMatch(/result="hit"} 1/);
    expect(counts).toMatch(/result="miss"} 2/);
  });
});
