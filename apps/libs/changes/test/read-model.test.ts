/**
 * The listing and the page-change decision on the real Postgres, over projector-pg's read-model
 * tables (made by its own setup) holding the runs of a schedule as projector-pg writes them: the
 * SQL picks the baseline the pure rule picks, the listing and the decision agree page by page, and
 * a decision waits while the read model lags.
 */
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fetchId, itemKey } from '@trawl/crawl';
import { setupReadModels } from '@trawl/projector-pg';
import { createTestDatabase, type TestDatabase } from '@trawl/store/testing';
import { jobChanges, PageChangeDetector } from '../src/index.ts';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase('trawl_changes_test');
  await setupReadModels(db.pool);
});
afterAll(async () => db?.drop());

const t = (minute: number) => new Date(Date.UTC(2030, 0, 1, 0, minute));
const SITE = 'http://site.test';

interface Run {
  readonly status: 'running' | 'finished' | 'failed' | 'cancelled';
  readonly dispatched: number | null;
  readonly ended?: number;
  readonly pages?: Readonly<Record<string, string | null>>;
  readonly items?: readonly { readonly path: string; readonly index: number; readonly fields: Record<string, string> }[];
  readonly urlsSeen?: number;
}

async function seedRun(scheduleId: string | null, run: Run, jobId = randomUUID()): Promise<string> {
  const pages = Object.entries(run.pages ?? {});
  await db.pool.query(
    `INSERT INTO jobs (job_id, user_id, schedule_id, status, dispatched_at, first_page_at, finished_at, completed_urls_seen, updated_at)
     VALUES ($1, 'alice', $2, $3, $4, $4, $5, $6, now())`,
    [jobId, scheduleId, run.status, run.dispatched === null ? null : t(run.dispatched), run.ended === undefined ? null : t(run.ended),
      run.status === 'finished' ? (run.urlsSeen ?? pages.length) : null],
  );
  for (const [path, hash] of pages) {
    const url = `${SITE}${path}`;
    await db.pool.query(
      `INSERT INTO job_pages (job_id, fetch_id, url, final_url, status, depth, render_mode, ok, fetched_at, event_id, content_hash)
       VALUES ($1, $2, $3, $3, $4, 1, 'http', $5, $6, $7, $8)`,
      [jobId, fetchId(jobId, url), url, hash === 'FAILED' ? 404 : 200, hash !== 'FAILED', t(run.dispatched ?? 0), randomUUID(), hash === 'FAILED' ? null : hash],
    );
  }
  for (const item of run.items ?? []) {
    const url = `${SITE}${item.path}`;
    await db.pool.query(
      `INSERT INTO job_items (job_id, item_key, fetch_id, url, fields, extracted_at, event_id) VALUES ($1, $2, $3, $4, $5, $6, $7)`,
      [jobId, itemKey(url, item.index, item.fields), fetchId(jobId, url), url, JSON.stringify(item.fields), t(run.dispatched ?? 0), randomUUID()],
    );
  }
  return jobId;
}

describe('change tracking over the read models', () => {
  it('lists a run against the latest run finished before it started, and the detector calls exactly the listed changed pages changed', async () => {
    const schedule = randomUUID();
    await seedRun(schedule, { status: 'finished', dispatched: 0, ended: 2, pages: { '/': 'old-home', '/a': 'a0' } });
    const previous = await seedRun(schedule, {
      status: 'finished', dispatched: 10, ended: 12,
      pages: { '/': 'h-home', '/a': 'h-a', '/b': 'h-b', '/c': 'h-c', '/f': 'FAILED' },
      items: [{ path: '/', index: 0, fields: { t: 'A' } }, { path: '/', index: 1, fields: { t: 'B' } }, { path: '/c', index: 0, fields: { t: 'C' } }],
    });
    await seedRun(schedule, { status: 'failed', dispatched: 14, ended: 15, pages: { '/': 'broken' } });
    const current = await seedRun(schedule, {
      status: 'finished', dispatched: 20, ended: 22,
      pages: { '/': 'h-home', '/a': 'h-a2', '/b': 'h-b', '/c': 'FAILED', '/d': 'h-d', '/f': 'h-f' },
      items: [{ path: '/', index: 0, fields: { t: 'A' } }, { path: '/', index: 1, fields: { t: 'B2' } }, { path: '/', index: 2, fields: { t: 'X' } }],
    });
    // Another schedule's run, later and finished: never a baseline of this one.
    await seedRun(randomUUID(), { status: 'finished', dispatched: 16, ended: 17, pages: { '/': 'other' } });

    const answer = await jobChanges(db.pool, current);
    expect(answer.kind).toBe('changes');
    if (answer.kind !== 'changes') return;
    const c = answer.changes;
    expect(c).toMatchObject({ job_id: current, schedule_id: schedule, previous_job_id: previous, settled: true, items_unchanged: 1 });
    const pages = Object.values(c.pages.lists).flat();
    const kinds = Object.fromEntries(pages.map((p) => [p.url.slice(SITE.length), p.kind]));
    expect(kinds).toEqual({ '/': 'unchanged', '/a': 'changed', '/b': 'unchanged', '/c': 'gone', '/d': 'new', '/f': 'new' });
    expect(c.pages.counts).toEqual({ new: 2, changed: 1, gone: 1, unchanged: 2, unknown: 0 });
    expect(c.items.counts).toEqual({ new: 1, changed: 1, removed: 1 });
    const items = Object.values(c.items.lists).flat();
    expect(items.map((i) => [i.kind, i.url.slice(SITE.length), i.index, i.fields, i.previous_fields])).toEqual([
      ['new', '/', 2, { t: 'X' }, null],
      ['changed', '/', 1, { t: 'B2' }, { t: 'B' }],
      ['removed', '/c', 0, null, { t: 'C' }],
    ]);
    expect(c.truncated).toBe(false);

    const detector = new PageChangeDetector(db.pool);
    const decisions: Record<string, string> = {};
    for (const p of pages.filter((p) => p.fetch_id !== null)) {
      const d = await detector.decide({ job_id: current, fetch_id: p.fetch_id!, url: p.url, content_hash: p.content_hash });
      decisions[p.url.slice(SITE.length)] = d.kind;
      if (d.kind === 'changed') expect(d).toEqual({ kind: 'changed', schedule_id: schedule, previous_job_id: previous, previous_fetch_id: p.previous_fetch_id, previous_content_hash: p.previous_content_hash });
    }
    expect(decisions).toEqual({ '/': 'none', '/a': 'changed', '/b': 'none', '/d': 'none', '/f': 'none' });
  });

  it('the first finished run of a schedule lists everything as new and changes nothing', async () => {
    const schedule = randomUUID();
    const first = await seedRun(schedule, { status: 'finished', dispatched: 0, ended: 1, pages: { '/': 'h' }, items: [{ path: '/', index: 0, fields: { t: 'A' } }] });
    const answer = await jobChanges(db.pool, first);
    expect(answer).toMatchObject({ kind: 'changes', changes: { previous_job_id: null, settled: true, pages: { counts: { new: 1, changed: 0, gone: 0 }, lists: { new: [{ kind: 'new' }] } }, items: { counts: { new: 1, changed: 0, removed: 0 }, lists: { new: [{ kind: 'new', index: 0 }] } } } });
    expect((await new PageChangeDetector(db.pool).decide({ job_id: first, fetch_id: 'x', url: `${SITE}/`, content_hash: 'h' })).kind).toBe('none');
  });

  it('waits while an earlier run has not ended or the baseline\'s pages are not all projected, and decides once they are', async () => {
    const schedule = randomUUID();
    const previous = await seedRun(schedule, { status: 'finished', dispatched: 0, ended: 1, pages: { '/': 'h1' }, urlsSeen: 2 });
    const open = await seedRun(schedule, { status: 'running', dispatched: 5 });
    const current = await seedRun(schedule, { status: 'running', dispatched: 10, pages: { '/': 'h2' } });
    const page = { job_id: current, fetch_id: fetchId(current, `${SITE}/`), url: `${SITE}/`, content_hash: 'h2' };
    const detector = new PageChangeDetector(db.pool);
    const first = await detector.decide(page);
    expect(first.kind).toBe('wait');
    expect(first.kind === 'wait' && first.reason).toContain(open);
    expect(await jobChanges(db.pool, current)).toMatchObject({ kind: 'changes', changes: { previous_job_id: previous, settled: false } });

    // The open run turns out to have failed; the baseline still misses a page row.
    await db.pool.query(`UPDATE jobs SET status = 'failed', finished_at = $2 WHERE job_id = $1`, [open, t(6)]);
    const second = await detector.decide(page);
    expect(second.kind === 'wait' && second.reason).toContain(`${previous} (1 of 2 pages projected)`);

    await db.pool.query(
      `INSERT INTO job_pages (job_id, fetch_id, url, status, depth, render_mode, ok, fetched_at, event_id) VALUES ($1, 'late', $2, 404, 1, 'http', false, $3, $4)`,
      [previous, `${SITE}/late`, t(1), randomUUID()],
    );
    expect(await detector.decide(page)).toMatchObject({ kind: 'changed', previous_job_id: previous, previous_content_hash: 'h1' });
  });

  it('a page of a run not started by a schedule, or of a run the read model has not seen dispatched, is not decided as changed', async () => {
    const adHoc = await seedRun(null, { status: 'running', dispatched: 0, pages: { '/': 'h' } });
    const detector = new PageChangeDetector(db.pool);
    expect(await detector.decide({ job_id: adHoc, fetch_id: 'f', url: `${SITE}/`, content_hash: 'h' })).toMatchObject({ kind: 'none' });
    expect(await jobChanges(db.pool, adHoc)).toEqual({ kind: 'not_scheduled' });
    const undispatched = await seedRun(randomUUID(), { status: 'running', dispatched: null });
    expect(await detector.decide({ job_id: undispatched, fetch_id: 'f', url: `${SITE}/`, content_hash: 'h' })).toMatchObject({ kind: 'wait' });
    expect(await detector.decide({ job_id: randomUUID(), fetch_id: 'f', url: `${SITE}/`, content_hash: 'h' })).toMatchObject({ kind: 'wait' });
    expect(await detector.decide({ job_id: adHoc, fetch_id: 'f', url: `${SITE}/`, content_hash: null })).toMatchObject({ kind: 'none' });
  });

  it('compares any two runs when one is named (`against`), and a re-extraction with its source job by default', async () => {
    const source = await seedRun(null, {
      status: 'finished', dispatched: 0, ended: 2, pages: { '/': 'h-home', '/a': 'h-a' },
      items: [{ path: '/', index: 0, fields: { t: '' } }, { path: '/', index: 1, fields: { t: '' } }],
    });
    const again = await seedRun(null, {
      status: 'finished', dispatched: 5, ended: 6, pages: { '/': 'h-home', '/a': 'h-a' },
      items: [{ path: '/', index: 0, fields: { t: 'A' } }, { path: '/', index: 1, fields: { t: 'B' } }, { path: '/a', index: 0, fields: { t: 'N' } }],
    });
    await db.pool.query(`UPDATE jobs SET spec = $2 WHERE job_id = $1`, [again, JSON.stringify({ reextract_of: source })]);
    for (const answer of [await jobChanges(db.pool, again), await jobChanges(db.pool, again, { against: source })]) {
      expect(answer.kind).toBe('changes');
      if (answer.kind !== 'changes') continue;
      const c = answer.changes;
      expect({ schedule_id: c.schedule_id, previous_job_id: c.previous_job_id, settled: c.settled, pages: c.pages.counts, items: c.items.counts }).toEqual({
        schedule_id: null, previous_job_id: source, settled: true,
        pages: { new: 0, changed: 0, gone: 0, unchanged: 2, unknown: 0 },
        items: { new: 1, changed: 2, removed: 0 },
      });
      expect(c.items.lists.changed.map((i) => [i.previous_fields, i.fields])).toEqual([[{ t: '' }, { t: 'A' }], [{ t: '' }, { t: 'B' }]]);
    }
    // The other way round, and against a run that has not ended (unsettled), or one that does not exist.
    const back = await jobChanges(db.pool, source, { against: again });
    expect(back.kind === 'changes' && back.changes.items.counts).toEqual({ new: 0, changed: 2, removed: 1 });
    const open = await seedRun(null, { status: 'running', dispatched: 7 });
    expect(await jobChanges(db.pool, source, { against: open })).toMatchObject({ kind: 'changes', changes: { settled: false, waiting_for: [`${open} (not ended)`] } });
    expect(await jobChanges(db.pool, source, { against: randomUUID() })).toEqual({ kind: 'against_not_found' });
  });
});
