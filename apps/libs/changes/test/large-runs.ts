/**
 * Two large runs of one schedule written straight into projector-pg's read-model tables (made by
 * its own setup), in bulk, with the page and item rows projector-pg writes: for the test that the
 * listing's memory does not grow with a run's size, and for bench/changes-memory.ts.
 *
 * The runs differ in a known way, so the counts are known without comparing anything:
 * - pages: the previous run has pages 0..n-1, this run pages `shift`..n+shift-1 (`shift` gone,
 *   `shift` new); of the pages in both, every tenth (by number) has another hash (changed);
 * - items: `perPage` on each page; on a changed page the first item has other fields (changed);
 *   a gone page's items are removed, a new page's new.
 */
import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { fetchId, itemKey } from '@trawl/crawl';

export const LARGE_SITE = 'http://large.test';

export interface LargeRunsSpec {
  readonly pages: number;
  readonly shift: number;
  readonly itemsPerPage: number;
}

export interface LargeRuns {
  readonly scheduleId: string;
  readonly previous: string;
  readonly current: string;
  /** What the listing must count. */
  readonly expected: {
    readonly pages: { readonly new: number; readonly changed: number; readonly gone: number; readonly unchanged: number; readonly unknown: number };
    readonly items: { readonly new: number; readonly changed: number; readonly removed: number; readonly unchanged: number };
  };
}

const pageUrl = (i: number) => `${LARGE_SITE}/p/${String(i).padStart(7, '0')}`;
const isChanged = (i: number) => i % 10 === 0;

async function insertRun(pool: Pick<pg.Pool, 'query'>, jobId: string, scheduleId: string, from: number, to: number, current: boolean, itemsPerPage: number, at: Date, ended: Date): Promise<void> {
  await pool.query(
    `INSERT INTO jobs (job_id, user_id, schedule_id, status, dispatched_at, first_page_at, finished_at, completed_urls_seen, updated_at)
     VALUES ($1, 'bulk', $2, 'finished', $3, $3, $4, $5, now())`,
    [jobId, scheduleId, at, ended, to - from],
  );
  const BATCH = 2_000;
  for (let start = from; start < to; start += BATCH) {
    const pages = { fetch: [] as string[], url: [] as string[], hash: [] as string[], event: [] as string[] };
    const items = { key: [] as string[], fetch: [] as string[], url: [] as string[], fields: [] as string[], event: [] as string[] };
    for (let i = start; i < Math.min(to, start + BATCH); i++) {
      const url = pageUrl(i);
      const fid = fetchId(jobId, url);
      const changed = current && isChanged(i);
      pages.fetch.push(fid);
      pages.url.push(url);
      pages.hash.push(`h${i}${changed ? 'x' : ''}`);
      pages.event.push(randomUUID());
      for (let k = 0; k < itemsPerPage; k++) {
        const fields = { title: `Item ${k} of page ${i}${changed && k === 0 ? ' (edited)' : ''}`, price: String((i * 7 + k) % 1000) };
        items.key.push(itemKey(url, k, fields));
        items.fetch.push(fid);
        items.url.push(url);
        items.fields.push(JSON.stringify(fields));
        items.event.push(randomUUID());
      }
    }
    await pool.query(
      `INSERT INTO job_pages (job_id, fetch_id, url, final_url, status, depth, render_mode, ok, fetched_at, event_id, content_hash)
       SELECT $1, f, u, u, 200, 1, 'http', true, $2, e, h FROM unnest($3::text[], $4::text[], $5::text[], $6::text[]) AS t(f, u, h, e)`,
      [jobId, at, pages.fetch, pages.url, pages.hash, pages.event],
    );
    if (items.key.length > 0) {
      await pool.query(
        `INSERT INTO job_items (job_id, item_key, fetch_id, url, fields, extracted_at, event_id)
         SELECT $1, k, f, u, j::jsonb, $2, e FROM unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[]) AS t(k, f, u, j, e)`,
        [jobId, at, items.key, items.fetch, items.url, items.fields, items.event],
      );
    }
  }
}

/** Seeds the two runs; `pages` > `shift` * 2. */
export async function seedLargeRuns(pool: Pick<pg.Pool, 'query'>, spec: LargeRunsSpec): Promise<LargeRuns> {
  const { pages: n, shift, itemsPerPage: k } = spec;
  const scheduleId = randomUUID();
  const previous = randomUUID();
  const current = randomUUID();
  const t = (minute: number) => new Date(Date.UTC(2030, 0, 1, 0, minute));
  await insertRun(pool, previous, scheduleId, 0, n, false, k, t(0), t(5));
  await insertRun(pool, current, scheduleId, shift, n + shift, true, k, t(10), t(15));
  let changed = 0;
  for (let i = shift; i < n; i++) if (isChanged(i)) changed++;
  const both = n - shift;
  return {
    scheduleId,
    previous,
    current,
    expected: {
      pages: { new: shift, changed, gone: shift, unchanged: both - changed, unknown: 0 },
      items: { new: shift * k, changed: k > 0 ? changed : 0, removed: shift * k, unchanged: both * k - (k > 0 ? changed : 0) },
    },
  };
}
