/** Asserts that the live tables equal what the events in the topics imply (oracle) and what the pure planner computes. */
import { expect } from 'vitest';
import type pg from 'pg';
import { InMemoryReadModel } from '../../src/model/in-memory-model.ts';
import { jobFromDb } from '../../src/sql/row-columns.ts';
import type { Harness } from './harness.ts';
import { expectedFrom } from './oracle.ts';

export async function compareWithEvents(h: Harness, pool: pg.Pool): Promise<void> {
  const events = await h.events();
  const expected = expectedFrom(events);
  const jobs = await pool.query('SELECT job_id, status, user_id, pages_fetched, pages_failed, items_extracted, bytes, log_seq, error_code FROM jobs');
  expect(jobs.rowCount).toBe(expected.jobs.size);
  for (const r of jobs.rows) {
    const { job_id, ...rest } = r;
    expect({ job_id, ...rest, bytes: Number(rest.bytes) }).toEqual({ job_id, ...expected.jobs.get(job_id) });
  }
  const pages = await pool.query('SELECT job_id, fetch_id, ok, status, bytes FROM job_pages');
  expect(pages.rowCount).toBe(expected.pages.size);
  for (const r of pages.rows) expect({ ok: r.ok, status: r.status, bytes: Number(r.bytes) }).toEqual(expected.pages.get(`${r.job_id}/${r.fetch_id}`));
  const items = await pool.query('SELECT job_id, item_key, fields FROM job_items');
  expect(items.rowCount).toBe(expected.items.size);
  for (const r of items.rows) expect(r.fields).toEqual(expected.items.get(`${r.job_id}/${r.item_key}`));
  const gaps = await pool.query(`SELECT job_id, count(*)::int AS n, max(seq) AS hi, min(seq) AS lo FROM job_log GROUP BY job_id`);
  for (const r of gaps.rows) expect({ n: r.n, hi: r.hi, lo: r.lo }).toEqual({ n: expected.logged.get(r.job_id), hi: expected.logged.get(r.job_id), lo: 1 });

  // And row for row what the pure planner computes from the same events.
  const model = new InMemoryReadModel();
  model.apply(events.map((e) => e.event));
  const stored = await pool.query('SELECT * FROM jobs ORDER BY job_id');
  for (const r of stored.rows) expect(jobFromDb(r)).toEqual(model.jobs.get(r.job_id));
}
