/**
 * Change tracking end to end: the dispatcher, frontier, worker, projector-pg, webhooks service and
 * API as processes on the real stack run two runs of one schedule (`formats: ["markdown"]`) over a
 * local site that changes between them — a page edited, one left alone, one unlinked, one added; on
 * the listing an item edited and one added, and the unlinked page's item gone with it.
 *
 * - `GET /jobs/:id/changes` of the second run gives exactly those sets;
 * - `page.changed` reaches a real receiver (signatures verified) exactly for the changed pages,
 *   with the ids of the PageChanged events in the log, and the WebSocket feed shows those events;
 * - `trawl replay pg` rebuilds projector-pg's read models from the log, and the answer is the same.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { ContentStore, contentStoreConfig } from '@trawl/content';
import type { JobCompleted, JobDispatched, PageChanged } from '@trawl/schemas';
import { waitFor } from '@trawl/streams/testing';
import { Receiver } from '@trawl/webhooks/testing';
import { Pipeline } from '../src/pipeline.ts';
import { freePort } from '../src/api-pipeline.ts';
import { trawlReplay } from './chaos/support.ts';

/** The site: path → [links, items], a version each; a page absent from a version answers 404. */
type Version = Record<string, { readonly text: string; readonly links: readonly string[]; readonly items: readonly string[] }>;
const RUN_1: Version = {
  '/': { text: 'The listing.', links: ['/a', '/b', '/c'], items: ['A', 'B'] },
  '/a': { text: 'Alpha, first edition.', links: [], items: [] },
  '/b': { text: 'Beta stays as it is.', links: [], items: ['K'] },
  '/c': { text: 'Gamma, soon unlinked.', links: [], items: ['C'] },
};
const RUN_2: Version = {
  '/': { text: 'The listing.', links: ['/a', '/b', '/d'], items: ['A', 'B2', 'X'] },
  '/a': { text: 'Alpha, second edition.', links: [], items: [] },
  '/b': RUN_1['/b']!,
  '/d': { text: 'Delta is new.', links: [], items: [] },
};

let version: Version = RUN_1;
function html(path: string): string | undefined {
  const page = version[path];
  if (!page) return undefined;
  const links = page.links.map((l) => `<li><a href="${l}">${l}</a></li>`).join('');
  const items = page.items.map((t) => `<li class="item"><span class="t">${t}</span></li>`).join('');
  return `<!doctype html><html><head><title>${path}</title></head><body><main><h1>${path}</h1><p>${page.text}</p><ul>${links}</ul><ul>${items}</ul></main></body></html>`;
}

let site: Server | undefined;
let pipeline: Pipeline | undefined;
let store: ContentStore | undefined;
let feed: WebSocket | undefined;
const receiver = new Receiver();
const bucket = `trawl-e2e-changes-${randomBytes(4).toString('hex')}`;

afterAll(async () => {
  feed?.close();
  await pipeline?.stop();
  await receiver.stop();
  await new Promise((r) => (site ? site.close(r) : r(undefined)));
  if (store) {
    await store.delete(await store.list()).catch(() => undefined);
    store.close();
  }
}, 120_000);

it('two runs of a schedule over a changed site: the exact changes, page.changed for exactly the changed pages, the same answer after a replay', async () => {
  site = createServer((req, res) => {
    const body = html(new URL(req.url ?? '/', 'http://x').pathname);
    res.writeHead(body ? 200 : 404, { 'content-type': 'text/html; charset=utf-8' });
    res.end(body ?? 'not here');
  });
  await new Promise<void>((r) => site!.listen(0, '127.0.0.1', r));
  const origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  await receiver.start();

  store = new ContentStore({ ...contentStoreConfig(), bucket });
  const apiPort = await freePort();
  const p = (pipeline = await Pipeline.start({
    env: { TRAWL_S3_BUCKET: bucket, TRAWL_WEBHOOK_RETRY_DELAYS_MS: '1000,2000,4000,8000,16000', TRAWL_LOOP_LIMIT_MS: '0' },
  }));
  const api = p.spawn('api', { TRAWL_API_PORT: String(apiPort), TRAWL_API_HOST: '127.0.0.1' });
  const base = `http://127.0.0.1:${apiPort}`;
  await waitFor(async () => (await fetch(`${api.operatorUrl}/readyz`).catch(() => undefined))?.status === 200, { timeoutMs: 120_000, message: 'the API ready' });
  for (const app of ['dispatcher', 'frontier', 'worker', 'projector-pg', 'webhooks'] as const) p.spawn(app);

  const key = await p.createKey('watcher');
  const call = async <T = Record<string, unknown>>(method: string, path: string, body?: unknown): Promise<{ status: number; body: T }> => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
  };
  const spider = `changes-${randomBytes(3).toString('hex')}`;
  expect((await call('PUT', `/websites/${spider}`, { name: 'Changing site', base_url: `${origin}/`, item_root: 'li.item', item_fields: [{ name: 't', selector: '.t' }], max_depth: 1, max_pages: 100 })).status).toBe(201);

  const soon = () => new Date(Date.now() + 2_000).toISOString();
  const created = await call<{ schedule_id: string; job_id: string }>('POST', '/crawl', { spider, start_urls: [`${origin}/`], depth: 1, interval: '1h', schedule_at: soon(), formats: ['markdown'] });
  expect(created.status).toBe(202);
  const scheduleId = created.body.schedule_id;
  const secret = `secret-${randomUUID()}`;
  expect((await call('POST', '/webhooks', { url: receiver.url('/changes', secret), events: ['page.changed'], secret, schedule_id: scheduleId })).status).toBe(201);

  const completed = (jobId: string) => (events: Awaited<ReturnType<Pipeline['events']>>) => events.some((e) => e.event.name === 'JobCompleted' && (e.event.value as JobCompleted).job_id === jobId);
  const run1 = created.body.job_id;
  await p.waitFor(completed(run1), 180_000, 'the first run');

  // The live feed, open before the second run.
  const messages: { type: string; event?: string; job_id?: string; data?: Record<string, unknown> }[] = [];
  feed = new WebSocket(`ws://127.0.0.1:${apiPort}/events?types=PageChanged`, { headers: { authorization: `Bearer ${key}` } });
  feed.on('message', (d) => messages.push(JSON.parse(String(d))));
  feed.on('error', (err) => messages.push({ type: 'error', data: { message: String(err) } }));
  await waitFor(() => messages.some((m) => m.type === 'hello'), { message: 'the feed hello' });

  version = RUN_2;
  expect((await call('PATCH', `/schedules/${scheduleId}`, { schedule_at: soon() })).status).toBe(200);
  const dispatched = await p.waitFor(
    (events) => events.some((e) => e.event.name === 'JobDispatched' && (e.event.value as JobDispatched).schedule_id === scheduleId && (e.event.value as JobDispatched).job_id !== run1),
    60_000,
    'the second run dispatched',
  );
  const run2 = (dispatched.find((e) => e.event.name === 'JobDispatched' && (e.event.value as JobDispatched).schedule_id === scheduleId && (e.event.value as JobDispatched).job_id !== run1)!.event.value as JobDispatched).job_id;
  const events = await p.waitFor(completed(run2), 180_000, 'the second run');
  const done = events.find((e) => e.event.name === 'JobCompleted' && (e.event.value as JobCompleted).job_id === run2)!.event.value as JobCompleted;
  expect(done).toMatchObject({ outcome: 'finished', pages_fetched: 4, pages_failed: 0 });

  // Once projector-pg holds the whole second run, the answer.
  type Changes = {
    previous_job_id: string | null;
    settled: boolean;
    status: string;
    pages: Record<string, { url: string }[]> & { counts: Record<string, number> };
    items: Record<string, { url: string; index: number | null; fields: Record<string, string> | null; previous_fields: Record<string, string> | null }[]> & { counts: Record<string, number> };
  };
  let answer: Changes | undefined;
  await waitFor(async () => {
    const res = await call<Changes>('GET', `/jobs/${run2}/changes`);
    answer = res.body;
    const seen = Object.entries(res.body.pages?.counts ?? {}).filter(([k]) => k !== 'gone').reduce((n, [, v]) => n + v, 0);
    const ic = res.body.items?.counts ?? {};
    return res.status === 200 && res.body.status === 'finished' && res.body.settled && seen === 4 && (ic.new ?? 0) + (ic.changed ?? 0) + (ic.unchanged ?? 0) === 4;
  }, { timeoutMs: 60_000, message: () => `the second run projected (${JSON.stringify(answer)})` });
  const paths = (list: { url: string }[]) => list.map((x) => x.url.slice(origin.length)).sort();
  const a = answer!;
  expect(a.previous_job_id).toBe(run1);
  expect({ new: paths(a.pages.new!), changed: paths(a.pages.changed!), gone: paths(a.pages.gone!), unchanged: paths(a.pages.unchanged!), unknown: paths(a.pages.unknown!) }).toEqual({
    new: ['/d'], changed: ['/', '/a'], gone: ['/c'], unchanged: ['/b'], unknown: [],
  });
  const items = (kind: string) => a.items[kind]!.map((i) => [i.url.slice(origin.length), i.index, i.previous_fields?.t ?? null, i.fields?.t ?? null]);
  expect({ new: items('new'), changed: items('changed'), removed: items('removed'), unchanged: a.items.counts.unchanged }).toEqual({
    new: [['/', 2, null, 'X']], changed: [['/', 1, 'B', 'B2']], removed: [['/c', 0, 'C', null]], unchanged: 2,
  });

  // page.changed: exactly the changed pages, once each (by id), signed, the ids those of the log's PageChanged.
  await waitFor(() => receiver.unique('/changes').length >= 2, { timeoutMs: 60_000, message: () => `page.changed deliveries (${receiver.all.length})` });
  await new Promise((r) => setTimeout(r, 3_000));
  const delivered = receiver.unique('/changes');
  expect(delivered.every((d) => d.validSignature && d.body.type === 'page.changed' && d.body.job_id === run2 && d.body.data.previous_job_id === run1)).toBe(true);
  expect(delivered.map((d) => String(d.body.data.url).slice(origin.length)).sort()).toEqual(['/', '/a']);
  const logged = (await p.events()).filter((e) => e.event.name === 'PageChanged').map((e) => e.event.value as PageChanged);
  expect(logged.every((e) => e.job_id === run2 && e.schedule_id === scheduleId)).toBe(true);
  expect(new Set(logged.map((e) => e.event_id)).size).toBe(2);
  expect(new Set(delivered.map((d) => d.body.id))).toEqual(new Set(logged.map((e) => e.event_id)));
  // …and the live feed carried the same events.
  await waitFor(() => messages.filter((m) => m.event === 'PageChanged').length >= 2, { message: 'PageChanged on the feed' });
  expect(messages.filter((m) => m.event === 'PageChanged').map((m) => String(m.data!.url).slice(origin.length)).sort()).toEqual(['/', '/a']);

  // A read model rebuilt from the log gives the same answer.
  const report = await trawlReplay(p, 'pg');
  expect(report.verified).toBe('live');
  const replayed = await call<Changes>('GET', `/jobs/${run2}/changes`);
  expect(replayed.body).toEqual(a);
});
