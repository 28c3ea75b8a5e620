/**
 * Page content through the API, against the real S3 of the environment (a fresh bucket) and the
 * job pages read model as projector-pg writes it: a stored format round-trips, a job streams as
 * NDJSON with every page and its Markdown, and deleting a job's content keeps what another job's
 * page shares.
 */
import { randomUUID } from 'node:crypto';
import { storePageContent, type ContentStore, type PageContent } from '@trawl/content';
import { testContentStore } from '@trawl/content/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedJob } from './read-model.ts';
import { startTestApi, type TestApi } from './support.ts';

let api: TestApi;
let store: ContentStore;
beforeAll(async () => {
  store = await testContentStore();
  api = await startTestApi({ content: store });
});
afterAll(async () => {
  await api?.close();
  if (store) {
    await store.delete(await store.list());
    store.close();
  }
});

const article = (n: number): string =>
  `<html><head><title>Notice ${n}</title></head><body><nav><a href="/">Home</a></nav><article><h1>Notice ${n}</h1><p>${`Notice number ${n} tells the crew where the next cargo goes and when it leaves. `.repeat(8)}</p></article><footer>Port footer</footer></body></html>`;

async function seedContentPage(jobId: string, i: number, content: PageContent | null): Promise<string> {
  const fetchId = `f${String(i).padStart(4, '0')}`;
  await api.db.pool.query(
    `INSERT INTO job_pages (job_id, fetch_id, url, final_url, status, content_type, bytes, fetch_ms, depth, render_mode, links_count,
       item_count, ok, attempts, fetched_at, event_id, content_hash, formats)
     VALUES ($1, $2, $3, $3, 200, 'text/html', 100, 5, 1, 'http', 0, 0, true, 1, $4, $5, $6, $7)`,
    [jobId, fetchId, `http://port.test/notice/${i}`, new Date(Date.UTC(2030, 0, 1, 0, 0, i)), randomUUID(), content?.contentHash ?? null, JSON.stringify(content?.formats ?? [])],
  );
  return fetchId;
}

const store3 = (n: number) => storePageContent(store, { html: article(n), finalUrl: `http://port.test/notice/${n}`, mainContent: true }, ['html', 'text', 'markdown']);

describe('page content', () => {
  it('serves a stored format, and says which is not stored', async () => {
    const { user, auth } = await api.user();
    const jobId = await seedJob(api.db.pool, { user_id: user });
    const fetchId = await seedContentPage(jobId, 1, await store3(1));
    const bare = await seedContentPage(jobId, 2, null);
    const md = await api.app.inject({ method: 'GET', url: `/jobs/${jobId}/pages/${fetchId}/content?format=markdown`, headers: auth });
    expect(md.statusCode).toBe(200);
    expect(md.headers['content-type']).toBe('text/markdown; charset=utf-8');
    expect(md.body).toMatch(/^# Notice 1\n\nNotice number 1 tells the crew/);
    expect(md.body).not.toContain('Port footer');
    const html = await api.app.inject({ method: 'GET', url: `/jobs/${jobId}/pages/${fetchId}/content?format=html`, headers: auth });
    expect(html.body).toBe(article(1));
    const text = await api.app.inject({ method: 'GET', url: `/jobs/${jobId}/pages/${fetchId}/content?format=text`, headers: auth });
    expect(text.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(text.body).toContain('Notice number 1 tells the crew');
    expect(text.body).not.toContain('Port footer');
    const none = await api.app.inject({ method: 'GET', url: `/jobs/${jobId}/pages/${bare}/content?format=markdown`, headers: auth });
    expect(none.statusCode).toBe(404);
    expect(none.json().error.code).toBe('CONTENT_NOT_FOUND');
    const noPage = await api.app.inject({ method: 'GET', url: `/jobs/${jobId}/pages/nope/content?format=markdown`, headers: auth });
    expect(noPage.json().error.code).toBe('PAGE_NOT_FOUND');
    const badFormat = await api.app.inject({ method: 'GET', url: `/jobs/${jobId}/pages/${fetchId}/content?format=docx`, headers: auth });
    expect(badFormat.statusCode).toBe(400);
    // A format that exists but was not asked for (a PDF of a page fetched over HTTP).
    const noPdf = await api.app.inject({ method: 'GET', url: `/jobs/${jobId}/pages/${fetchId}/content?format=pdf`, headers: auth });
    expect(noPdf.json().error.code).toBe('CONTENT_NOT_FOUND');
    const other = await api.user();
    const foreign = await api.app.inject({ method: 'GET', url: `/jobs/${jobId}/pages/${fetchId}/content?format=markdown`, headers: other.auth });
    expect(foreign.json().error.code).toBe('JOB_NOT_FOUND');
  });

  it("serves stored content sandboxed: CSP sandbox without scripts, nosniff, and as an attachment unless asked inline", async () => {
    const { user, auth } = await api.user();
    const jobId = await seedJob(api.db.pool, { user_id: user });
    const fetchId = await seedContentPage(jobId, 1, await store3(3));
    for (const [format, ext] of [['html', 'html'], ['text', 'txt'], ['markdown', 'md']] as const) {
      const res = await api.app.inject({ method: 'GET', url: `/jobs/${jobId}/pages/${fetchId}/content?format=${format}`, headers: auth });
      expect(res.statusCode).toBe(200);
      const csp = String(res.headers['content-security-policy']).split(';').map((d) => d.trim());
      expect(csp).toContain('sandbox');
      expect(csp.join(';')).not.toMatch(/allow-scripts|allow-same-origin/);
      expect(csp).toContain("default-src 'none'");
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['content-disposition']).toBe(`attachment; filename="${fetchId}.${ext}"`);
    }
    const inline = await api.app.inject({ method: 'GET', url: `/jobs/${jobId}/pages/${fetchId}/content?format=html&inline=true`, headers: auth });
    expect(inline.statusCode).toBe(200);
    expect(inline.headers['content-disposition']).toBe(`inline; filename="${fetchId}.html"`);
    expect(String(inline.headers['content-security-policy'])).toMatch(/^sandbox;/);
    expect(inline.headers['x-content-type-options']).toBe('nosniff');
    expect(inline.body).toBe(article(3));
    const explicit = await api.app.inject({ method: 'GET', url: `/jobs/${jobId}/pages/${fetchId}/content?format=html&inline=false`, headers: auth });
    expect(explicit.headers['content-disposition']).toBe(`attachment; filename="${fetchId}.html"`);
    expect((await api.app.inject({ method: 'GET', url: `/jobs/${jobId}/pages/${fetchId}/content?format=html&inline=maybe`, headers: auth })).statusCode).toBe(400);
  });

  it('serves a screenshot and a PDF as the bytes the browser made, sandboxed, typed image/png and application/pdf', async () => {
    const { user, auth } = await api.user();
    const jobId = await seedJob(api.db.pool, { user_id: user });
    // Binary, with bytes that are no valid UTF-8: a text round trip would change them.
    const png = Buffer.concat([Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]), Buffer.from([0xff, 0xfe, 0x00, 0x80, 0xc3])]);
    const pdf = Buffer.concat([Buffer.from('%PDF-1.4\n'), Buffer.from([0xe2, 0xe3, 0xcf, 0xd3, 0xff])]);
    const content = await storePageContent(store, { html: article(4), finalUrl: 'http://port.test/notice/4', captures: { screenshot: png, pdf } }, ['screenshot', 'pdf']);
    expect(content.formats.map((f) => f.format)).toEqual(['screenshot', 'pdf']);
    const fetchId = await seedContentPage(jobId, 1, content);
    for (const [format, type, bytes, ext] of [['screenshot', 'image/png', png, 'png'], ['pdf', 'application/pdf', pdf, 'pdf']] as const) {
      const res = await api.app.inject({ method: 'GET', url: `/jobs/${jobId}/pages/${fetchId}/content?format=${format}`, headers: auth });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe(type);
      expect(res.rawPayload.equals(bytes)).toBe(true);
      expect(String(res.headers['content-security-policy'])).toMatch(/^sandbox;/);
      expect(res.headers['x-content-type-options']).toBe('nosniff');
      expect(res.headers['content-disposition']).toBe(`attachment; filename="${fetchId}.${ext}"`);
    }
    // NDJSON inlines text formats only.
    const include = await api.app.inject({ method: 'GET', url: `/jobs/${jobId}/pages?format=ndjson&include=screenshot`, headers: auth });
    expect(include.statusCode).toBe(400);
  });

  it('streams every page of a job as NDJSON with its Markdown', async () => {
    const { user, auth } = await api.user();
    const jobId = await seedJob(api.db.pool, { user_id: user });
    const n = 250; // more than one batch of the stream (200)
    const distinct = await Promise.all([1, 2, 3].map(store3));
    for (let i = 0; i < n; i++) await seedContentPage(jobId, i, i % 10 === 9 ? null : distinct[i % 3]!);
    const res = await api.app.inject({ method: 'GET', url: `/jobs/${jobId}/pages?format=ndjson&include=markdown`, headers: auth });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/x-ndjson; charset=utf-8');
    const lines = res.body.trimEnd().split('\n').map((l) => JSON.parse(l) as { fetch_id: string; markdown: string | null; content_hash: string | null });
    expect(lines.map((l) => l.fetch_id)).toEqual(Array.from({ length: n }, (_, i) => `f${String(i).padStart(4, '0')}`));
    lines.forEach((l, i) => {
      if (i % 10 === 9) expect(l.markdown).toBeNull();
      else expect(l.markdown).toMatch(new RegExp(`^# Notice ${(i % 3) + 1}\\n`));
    });
    expect(lines[0]!.content_hash).toBe(distinct[0]!.contentHash);
    const badInclude = await api.app.inject({ method: 'GET', url: `/jobs/${jobId}/pages?include=markdown`, headers: auth });
    expect(badInclude.statusCode).toBe(400);
  });

  it("deletes a job's content but keeps objects another job's page shares", async () => {
    const { user, auth } = await api.user();
    const [a, b] = [await seedJob(api.db.pool, { user_id: user }), await seedJob(api.db.pool, { user_id: user })];
    const shared = await storePageContent(store, { html: article(100), finalUrl: 'http://port.test/shared' }, ['markdown']);
    const own = await storePageContent(store, { html: article(101), finalUrl: 'http://port.test/own' }, ['markdown']);
    const sharedPage = await seedContentPage(a, 1, shared);
    await seedContentPage(a, 2, own);
    await seedContentPage(b, 1, shared);
    const del = await api.app.inject({ method: 'DELETE', url: `/jobs/${a}/content`, headers: auth });
    expect(del.statusCode).toBe(200);
    expect(del.json()).toEqual({ deleted_objects: 2 });
    expect(await store.has(own.contentHash)).toBe(false);
    expect(await store.has(own.formats[0]!.hash)).toBe(false);
    expect(await store.has(shared.contentHash)).toBe(true);
    const stillB = await api.app.inject({ method: 'GET', url: `/jobs/${b}/pages/f0001/content?format=markdown`, headers: auth });
    expect(stillB.statusCode).toBe(200);
    const goneA = await api.app.inject({ method: 'GET', url: `/jobs/${a}/pages/f0002/content?format=markdown`, headers: auth });
    expect(goneA.json().error.code).toBe('CONTENT_NOT_FOUND');
    const sharedA = await api.app.inject({ method: 'GET', url: `/jobs/${a}/pages/${sharedPage}/content?format=markdown`, headers: auth });
    expect(sharedA.statusCode).toBe(200);
  });

  it('a job whose content is deleted keeps no shared object alive: deleting the last job that names it deletes it', async () => {
    const { user, auth } = await api.user();
    const [a, b] = [await seedJob(api.db.pool, { user_id: user }), await seedJob(api.db.pool, { user_id: user })];
    const shared = await storePageContent(store, { html: article(200), finalUrl: 'http://port.test/shared-2' }, ['markdown']);
    await seedContentPage(a, 1, shared);
    await seedContentPage(b, 1, shared);
    expect((await api.app.inject({ method: 'DELETE', url: `/jobs/${a}/content`, headers: auth })).json()).toEqual({ deleted_objects: 0 });
    expect(await store.has(shared.contentHash)).toBe(true);
    expect((await api.app.inject({ method: 'DELETE', url: `/jobs/${b}/content`, headers: auth })).json()).toEqual({ deleted_objects: 2 });
    expect(await store.has(shared.contentHash)).toBe(false);
    expect(await store.has(shared.formats[0]!.hash)).toBe(false);
    const { rows } = await api.db.pool.query('SELECT job_id, reason, deleted_objects FROM job_content_deletions WHERE job_id = ANY ($1) ORDER BY deleted_objects', [[a, b]]);
    expect(rows).toEqual([{ job_id: a, reason: 'request', deleted_objects: 0 }, { job_id: b, reason: 'request', deleted_objects: 2 }]);
  });
});

describe('trawl export', () => {
  it('writes every page of a job as CSV with its Markdown, and as NDJSON', async () => {
    const { spawn } = await import('node:child_process');
    const { join } = await import('node:path');
    const { appDir } = await import('@trawl/streams');
    const { user, key } = await api.user();
    const jobId = await seedJob(api.db.pool, { user_id: user });
    const stored = await store3(7);
    for (let i = 0; i < 5; i++) await seedContentPage(jobId, i, i === 4 ? null : stored);
    const address = await api.app.listen({ port: 0, host: '127.0.0.1' });
    // Not spawnSync: the API answering the CLI runs on this process's event loop.
    const cli = (...args: string[]) =>
      new Promise<{ status: number | null; stdout: string; stderr: string }>((resolve) => {
        const child = spawn(process.execPath, [join(appDir('cli'), 'bin', 'trawl.js'), 'export', jobId, ...args], {
          env: { ...process.env, TRAWL_API_URL: address, TRAWL_API_KEY: key },
        });
        let stdout = '';
        let stderr = '';
        child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
        child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
        child.on('close', (status) => resolve({ status, stdout, stderr }));
      });
    const csv = await cli('--format', 'csv', '--include', 'markdown');
    expect(csv.status, csv.stderr).toBe(0);
    expect(csv.stderr).toContain('5 pages exported');
    const [header, ...rows] = csv.stdout.split('\r\n').filter((l, i, all) => l || i < all.length - 1);
    expect(header!.split(',').at(-1)).toBe('markdown');
    expect(csv.stdout).toContain('"# Notice 7\n\nNotice number 7');
    expect(rows.filter((r) => r.startsWith('f000')).length).toBe(5);
    const ndjson = await cli('--format', 'ndjson');
    expect(ndjson.status).toBe(0);
    const lines = ndjson.stdout.trim().split('\n').map((l) => JSON.parse(l) as { fetch_id: string });
    expect(lines.map((l) => l.fetch_id)).toEqual(['f0000', 'f0001', 'f0002', 'f0003', 'f0004']);
    const bad = await cli('--format', 'xml');
    expect(bad.status).not.toBe(0);
  });
});
