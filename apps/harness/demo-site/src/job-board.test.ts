import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createJobBoard } from './job-board.ts';
import { serve, type RunningServer } from './serve.ts';

let server: RunningServer;
beforeAll(async () => {
  server = await serve(createJobBoard({ listings: 25 }));
});
afterAll(() => server.close());

const get = async (path: string) => {
  const r = await fetch(`${server.origin}${path}`);
  return { status: r.status, type: r.headers.get('content-type'), body: await r.text() };
};

describe('demo job board', () => {
  it('serves listing pages of 10 with a next link, about 5 KB each', async () => {
    const p1 = await get('/jobs?page=1');
    expect(p1.status).toBe(200);
    expect(p1.body.match(/<article class="job"/g)).toHaveLength(10);
    expect(p1.body).toContain('<a class="next" rel="next" href="/jobs?page=2">');
    expect(p1.body.length).toBeGreaterThan(4_000);
    expect(p1.body.length).toBeLessThan(8_000);
    const last = await get('/jobs?page=3');
    expect(last.body.match(/<article class="job"/g)).toHaveLength(5);
    expect(last.body).not.toContain('class="next"');
  });

  it('filters by keyword and location', async () => {
    const r = await get('/jobs?q=engineer');
    for (const m of r.body.matchAll(/<h2><a [^>]+>([^<]+)</g)) expect(m[1]!.toLowerCase()).toContain('engineer');
  });

  it('serves detail pages and 404s unknown ones', async () => {
    expect((await get('/jobs/7')).body).toContain('data-id="7"');
    expect((await get('/jobs/999')).status).toBe(404);
  });

  it('has a section whose listings exist only after JavaScript runs', async () => {
    const r = await get('/js/jobs');
    expect(r.body).not.toContain('<article class="job"');
    expect(r.body).toContain("a.className = 'job'");
  });

  it('disallows /private/ in robots.txt', async () => {
    expect((await get('/robots.txt')).body).toContain('Disallow: /private/');
  });

  it('is deterministic', async () => {
    expect((await get('/jobs/3')).body).toBe((await get('/jobs/3')).body);
  });

  it('logs every request', () => {
    expect(server.accessLog.entries().length).toBeGreaterThan(5);
    expect(server.accessLog.entries()[0]).toMatchObject({ method: 'GET', path: '/jobs?page=1' });
  });
});
