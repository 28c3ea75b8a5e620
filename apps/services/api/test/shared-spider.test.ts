/**
 * A shared website (the operator's) that carries credentials keeps its crawls on its own hosts: a
 * user cannot aim the operator's headers at a host of their own by naming it as a start URL or by
 * widening the scope. Without credentials, or on a user's own website, start URLs are free.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { crawlSpec, upsertWebsite } from '@trawl/store';
import { startTestApi, type TestApi } from './support.ts';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api?.close();
});

async function shared(id: string, headers: Record<string, string>) {
  await upsertWebsite(api.db.pool, { ...crawlSpec(null), id, owner_id: null, name: 'Shared', base_url: 'http://shop.test/', next_link_selector: null, page_param: null, item_root: null, headers, allowed_hosts: ['*.cdn.test'] });
}

it('refuses start URLs off a credential-carrying shared website\'s hosts, and a wider scope; accepts its own hosts', async () => {
  const { auth } = await api.user();
  const id = `shared-creds-${Date.now()}`;
  await shared(id, { 'x-api-key': api.app.secrets.seal('operator-key', 'crawl.credential') });
  const crawl = (payload: object) => api.app.inject({ method: 'POST', url: '/crawl', headers: auth, payload: { spider: id, depth: 0, ...payload } });

  const off = await crawl({ start_urls: ['http://shop.test/a', 'http://mine.test/'] });
  expect(off.statusCode).toBe(400);
  expect(off.json().error).toMatchObject({ code: 'SHARED_SPIDER_HOSTS', field: 'start_urls.1' });
  const wider = await crawl({ start_urls: ['http://shop.test/a'], scope: 'any' });
  expect(wider.json().error).toMatchObject({ code: 'SHARED_SPIDER_HOSTS', field: 'scope' });
  expect(off.body + wider.body).not.toContain('operator-key');

  expect((await crawl({ start_urls: ['http://shop.test/a', 'http://img.cdn.test/x'] })).statusCode).toBe(200);
});

it('leaves a shared website without credentials free to crawl any start URL', async () => {
  const { auth } = await api.user();
  const id = `shared-plain-${Date.now()}`;
  await shared(id, {});
  const res = await api.app.inject({ method: 'POST', url: '/crawl', headers: auth, payload: { spider: id, depth: 0, start_urls: ['http://mine.test/'] } });
  expect(res.statusCode).toBe(200);
});
