/**
 * Job reads on read-model rows written as projector-pg writes them: list with filters and
 * pagination, status, pages, items (JSON pages, NDJSON and CSV streams), and cancel.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedItems, seedJob, seedPages } from './read-model.ts';
import { startTestApi, type TestApi } from './support.ts';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api?.close();
});

const get = (url: string, headers: object) => api.app.inject({ method: 'GET', url, headers: headers as Record<string, string> });

describe('GET /jobs', () => {
  it('lists newest first, filters by status and schedule, and pages with a cursor', async () => {
    const { user, auth } = await api.user();
    const t0 = Date.now() - 60_000;
    const ids: string[] = [];
    for (let i = 0; i < 7; i++) {
      ids.push(await seedJob(api.db.pool, {
        user_id: user,
        status: i % 2 ? 'finished' : 'running',
        schedule_id: i === 6 ? 'sched-1' : null,
        requested_at: new Date(t0 + i * 1000),
      }));
    }
    const page1 = (await get('/jobs?limit=3', auth)).json();
    expect(page1.jobs.map((j: { job_id: string }) => j.job_id)).toEqual([ids[6], ids[5], ids[4]]);
    const page2 = (await get(`/jobs?limit=3&cursor=${page1.next_cursor}`, auth)).json();
    expect(page2.jobs.map((j: { job_id: string }) => j.job_id)).toEqual([ids[3], ids[2], ids[1]]);
    const page3 = (await get(`/jobs?limit=3&cursor=${page2.next_cursor}`, auth)).json();
    expect(page3.jobs.map((j: { job_id: string }) => j.job_id)).toEqual([ids[0]]);
    expect(page3.next_cursor).toBeNull();

    const finished = (await get('/jobs?status=finished', auth)).json().jobs;
    expect(finished.map((j: { job_id: string }) => j.job_id)).toEqual([ids[5], ids[3], ids[1]]);
    const both = (await get('/jobs?status=finished,running&limit=100', auth)).json().jobs;
    expect(both).toHaveLength(7);
    expect((await get('/jobs?schedule_id=sched-1', auth)).json().jobs.map((j: { job_id: string }) => j.job_id)).toEqual([ids[6]]);
    const since = new Date(t0 + 4_500).toISOString();
    expect((await get(`/jobs?since=${since}`, auth)).json().jobs).toHaveLength(2);
  });

  it('lists a job accepted a moment ago as pending before the projector has it', async () => {
    const { auth } = await api.user();
    const { job_id } = (await api.app.inject({ method: 'POST', url: '/crawl', headers: auth, payload: { start_urls: ['http://a.test/'], depth: 0 } })).json();
    const jobs = (await get('/jobs', auth)).json().jobs;
    expect(jobs).toEqual([expect.objectContaining({ job_id, status: 'pending' })]);
    expect((await get('/jobs?status=running', auth)).json().jobs).toEqual([]);
  });
});

describe('GET /jobs/:id/status', () => {
  it('shows status, counters and timings', async () => {
    const { user, auth } = await api.user();
    const id = await seedJob(api.db.pool, { user_id: user, status: 'finished', pages_fetched: 9, requested_at: new Date(Date.now() - 10_000) });
    const res = await get(`/jobs/${id}/status`, auth);
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({
      job_id: id,
      status: 'finished',
      counters: { pages_fetched: 9, pages_failed: 1, items_extracted: 3, bytes: 12345, urls_seen: 10 },
      timings: { requested_at: expect.any(String), finished_at: expect.any(String), duration_ms: 5000 },
      error: null,
    });
  });

  it("shows the counters projector-pg keeps on the job's row (blocked pages, rel=canonical duplicates, sessions replaced), not a count of its log or pages", async () => {
    const { user, auth } = await api.user();
    const id = await seedJob(api.db.pool, { user_id: user, status: 'finished', pages_fetched: 4, requested_at: new Date(Date.now() - 10_000), counters: { pages_blocked: 1, duplicates: 2, sessions_replaced: 3 } });
    // Lines the view once counted per request: they no longer change what it shows.
    const lines: [string, Record<string, unknown>][] = [
      ['PageFetched', { url: 'http://a.test/p?ref=1', canonical_url: 'http://a.test/p', notes: ['session retired and replaced: session 0 met a block (TRAWL_BLOCKED)'] }],
    ];
    for (const [i, [event, data]] of lines.entries()) {
      await api.db.pool.query(`INSERT INTO job_log (job_id, seq, ts, level, msg, event, event_id, data) VALUES ($1, $2, now(), 'info', 'x', $3, gen_random_uuid()::text, $4)`, [id, i + 1, event, JSON.stringify(data)]);
    }
    expect((await get(`/jobs/${id}/status`, auth)).json().counters).toMatchObject({ pages_fetched: 4, pages_blocked: 1, duplicates: 2, sessions_replaced: 3 });
    const fresh = await seedJob(api.db.pool, { user_id: user, status: 'running', requested_at: new Date(Date.now() - 10_000) });
    expect((await get(`/jobs/${fresh}/status`, auth)).json().counters).toMatchObject({ pages_blocked: 0, duplicates: 0, sessions_replaced: 0 });
  });

  it("shows the adaptive throttle's latest setting per host, from the PageFetched lines of its log", async () => {
    const { user, auth } = await api.user();
    const id = await seedJob(api.db.pool, { user_id: user, status: 'running', pages_fetched: 5, requested_at: new Date(Date.now() - 10_000) });
    expect((await get(`/jobs/${id}/status`, auth)).json().throttle).toEqual([]);
    const base = Date.now() - 60_000;
    const at = (s: number) => new Date(base + s * 1000).toISOString();
    const lines: [string, string, Record<string, unknown>][] = [
      ['PageFetched', at(1), { url: 'http://b.test/1', throttle: { host: 'b.test', delay_ms: 0, concurrency: 1 } }],
      ['PageFetched', at(2), { url: 'http://a.test/1', throttle: { host: 'a.test:8080', delay_ms: 0, concurrency: 1 } }],
      ['PageFetched', at(3), { url: 'http://b.test/2', throttle: { host: 'b.test', delay_ms: 240, concurrency: 4 } }],
      ['PageFetched', at(4), { url: 'http://b.test/3' }],
      ['PageFailed', at(5), { url: 'http://b.test/4' }],
    ];
    for (const [i, [event, ts, data]] of lines.entries()) {
      await api.db.pool.query(`INSERT INTO job_log (job_id, seq, ts, level, msg, event, event_id, data) VALUES ($1, $2, $3, 'info', 'x', $4, gen_random_uuid()::text, $5)`, [id, i + 1, ts, event, JSON.stringify(data)]);
    }
    const res = await get(`/jobs/${id}/status`, auth);
    expect(res.json().throttle).toEqual([
      { host: 'a.test:8080', delay_ms: 0, concurrency: 1, at: at(2) },
      { host: 'b.test', delay_ms: 240, concurrency: 4, at: at(3) },
    ]);
  });

  it('answers 404 JOB_NOT_FOUND for an unknown job', async () => {
    const { auth } = await api.user();
    const res = await get('/jobs/00000000-0000-4000-8000-000000000001/status', auth);
    expect(res.statusCode).toBe(404);
    expect(res.json().error.code).toBe('JOB_NOT_FOUND');
  });
});

describe('GET /jobs/:id/pages', () => {
  it('pages through fetched and failed pages in order, and filters by ok', async () => {
    const { user, auth } = await api.user();
    const id = await seedJob(api.db.pool, { user_id: user });
    await seedPages(api.db.pool, id, 8);
    const first = (await get(`/jobs/${id}/pages?limit=5`, auth)).json();
    expect(first.pages).toHaveLength(5);
    expect(first.pages[0]).toMatchObject({ url: 'http://a.test/p0', status: 200, ok: true, render_mode: 'http', fetched_at: '2030-01-01T00:00:00.000Z' });
    const rest = (await get(`/jobs/${id}/pages?limit=5&cursor=${first.next_cursor}`, auth)).json();
    expect(rest.pages.map((p: { url: string }) => p.url)).toEqual(['http://a.test/p5', 'http://a.test/p6', 'http://a.test/p7']);
    expect(rest.next_cursor).toBeNull();
    const failed = (await get(`/jobs/${id}/pages?ok=false`, auth)).json().pages;
    expect(failed.map((p: { url: string; error_code: string }) => [p.url, p.error_code])).toEqual([
      ['http://a.test/p3', 'HTTP_500'],
      ['http://a.test/p7', 'HTTP_500'],
    ]);
  });
});

describe('GET /jobs/:id/items', () => {
  const items: Record<string, string>[] = [{ title: 'Senior, "Go" dev', company: 'Acme' }, { title: '=cmd()', salary: '100k' }, { title: 'Tester' }];

  it('answers JSON pages', async () => {
    const { user, auth } = await api.user();
    const id = await seedJob(api.db.pool, { user_id: user });
    await seedItems(api.db.pool, id, items);
    const first = (await get(`/jobs/${id}/items?limit=2`, auth)).json();
    expect(first.items.map((i: { fields: object }) => i.fields)).toEqual(items.slice(0, 2));
    const rest = (await get(`/jobs/${id}/items?limit=2&cursor=${first.next_cursor}`, auth)).json();
    expect(rest.items.map((i: { fields: object }) => i.fields)).toEqual(items.slice(2));
  });

  it('streams NDJSON (by format or Accept)', async () => {
    const { user, auth } = await api.user();
    const id = await seedJob(api.db.pool, { user_id: user });
    await seedItems(api.db.pool, id, items);
    for (const res of [await get(`/jobs/${id}/items?format=ndjson`, auth), await get(`/jobs/${id}/items`, { ...auth, accept: 'application/x-ndjson' })]) {
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toMatch(/application\/x-ndjson/);
      const lines = res.body.trim().split('\n').map((l) => JSON.parse(l));
      expect(lines.map((l) => l.fields)).toEqual(items);
    }
  });

  it('streams CSV with the union of field names as header, quoted and formula-safe', async () => {
    const { user, auth } = await api.user();
    const id = await seedJob(api.db.pool, { user_id: user });
    await seedItems(api.db.pool, id, items);
    const res = await get(`/jobs/${id}/items`, { ...auth, accept: 'text/csv' });
    expect(res.headers['content-type']).toMatch(/text\/csv/);
    expect(res.headers['content-disposition']).toContain(`items-${id}.csv`);
    const lines = res.body.split('\r\n');
    expect(lines[0]).toBe('item_key,url,extracted_at,errors,company,salary,title');
    expect(lines[1]).toBe('k0000,http://a.test/i0,2030-01-01T00:00:00.000Z,,Acme,,"Senior, ""Go"" dev"');
    expect(lines[2]).toBe("k0001,http://a.test/i1,2030-01-01T00:00:01.000Z,,,100k,'=cmd()");
  });

  it("writes an item's schema errors in the CSV as the JSON array the other formats carry, blank when valid", async () => {
    const { user, auth } = await api.user();
    const id = await seedJob(api.db.pool, { user_id: user });
    await seedItems(api.db.pool, id, items);
    // Messages as the item schema gives them: a comma, a quote, a semicolon inside one.
    const errors = ['/salary must be number', '/title must match pattern "^[A-Z];x,y$"'];
    await api.db.pool.query(`UPDATE job_items SET errors = $2 WHERE job_id = $1 AND item_key = 'k0001'`, [id, JSON.stringify(errors)]);
    const res = await get(`/jobs/${id}/items?format=csv`, auth);
    const lines = res.body.split('\r\n');
    expect(lines[0]).toBe('item_key,url,extracted_at,errors,company,salary,title');
    expect(lines[1]).toBe('k0000,http://a.test/i0,2030-01-01T00:00:00.000Z,,Acme,,"Senior, ""Go"" dev"');
    expect(lines[2]).toBe(`k0001,http://a.test/i1,2030-01-01T00:00:01.000Z,"${JSON.stringify(errors).replace(/"/g, '""')}",,100k,'=cmd()`);
    // The cell parses back to the same list.
    const cell = /^[^,]*,[^,]*,[^,]*,"((?:[^"]|"")*)"/.exec(lines[2]!)![1]!.replace(/""/g, '"');
    expect(JSON.parse(cell)).toEqual(errors);
    // Filtered to the invalid items, as the JSON pages are.
    const invalid = (await get(`/jobs/${id}/items?format=csv&valid=false`, auth)).body.split('\r\n').filter(Boolean);
    expect(invalid.map((l) => l.split(',')[0])).toEqual(['item_key', 'k0001']);
  });

  it('streams a large export in batches', async () => {
    const { user, auth } = await api.user();
    const id = await seedJob(api.db.pool, { user_id: user });
    await api.db.pool.query(
      `INSERT INTO job_items (job_id, item_key, fetch_id, url, fields, extracted_at, event_id)
       SELECT $1, 'k' || lpad(g::text, 5, '0'), 'f', 'http://a.test/', jsonb_build_object('n', g::text), now(), gen_random_uuid()::text
       FROM generate_series(1, 2500) g`,
      [id],
    );
    const res = await get(`/jobs/${id}/items?format=ndjson`, auth);
    const keys = res.body.trim().split('\n').map((l) => JSON.parse(l).item_key);
    expect(keys).toHaveLength(2500);
    expect(new Set(keys).size).toBe(2500);
  });
});

describe('POST /jobs/:id/cancel', () => {
  it('answers 202 for a running job and 409 for a finished one', async () => {
    const { user, auth } = await api.user();
    const running = await seedJob(api.db.pool, { user_id: user, status: 'running' });
    const res = await api.app.inject({ method: 'POST', url: `/jobs/${running}/cancel`, headers: auth });
    expect(res.statusCode).toBe(202);
    expect(res.json()).toEqual({ job_id: running, status: 'cancelling' });
    const finished = await seedJob(api.db.pool, { user_id: user, status: 'finished' });
    const again = await api.app.inject({ method: 'POST', url: `/jobs/${finished}/cancel`, headers: auth });
    expect(again.statusCode).toBe(409);
    expect(again.json().error.code).toBe('JOB_ALREADY_FINISHED');
  });

  it('cancels a job accepted a moment ago (not projected yet)', async () => {
    const { auth } = await api.user();
    const { job_id } = (await api.app.inject({ method: 'POST', url: '/crawl', headers: auth, payload: { start_urls: ['http://a.test/c'], depth: 0 } })).json();
    expect((await api.app.inject({ method: 'POST', url: `/jobs/${job_id}/cancel`, headers: auth })).statusCode).toBe(202);
  });
});
