/**
 * API keys, per-key rate limits, and isolation: a user never sees another user's jobs, pages,
 * items, logs, schedules or websites — another user's id answers 404 like an unknown one. The
 * walks take the routes from the app's own route tree, so a new route is checked without being
 * listed; keys never reach the logs.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import type { InjectOptions } from 'fastify';
import { pino } from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WebSocket } from 'ws';
import { migrate } from '@trawl/store';
import { createTestDatabase } from '@trawl/store/testing';
import { API_KEY_ID_PATTERN, createApiKey, hashApiKey, revokeApiKey, userForApiKey } from '../src/data/api-keys.ts';
import { API_MIGRATION_OWNER, API_MIGRATIONS } from '../src/data/migrations.ts';
import { seedItems, seedJob, seedPages } from './read-model.ts';
import { eventually, keyKnown, routeList, startTestApi, type Route, type TestApi } from './support.ts';

let api: TestApi;
beforeAll(async () => {
  // The walks below fail to authenticate hundreds of times from one address: the failure budget
  // (tested in auth-flood.test.ts) is lifted here so that they see the 401s they look for.
  api = await startTestApi({ config: { authFailureLimit: 1_000_000 } });
});
afterAll(async () => {
  await api?.close();
});

describe('API keys', () => {
  it('keys look like trawl_… and only their SHA-256 is stored', async () => {
    const { key, id } = await createApiKey(api.db.pool, 'someone');
    expect(key).toMatch(/^trawl_[A-Za-z0-9_-]{43}$/);
    const { rows } = await api.db.pool.query('SELECT * FROM api_keys WHERE id = $1', [id]);
    expect(rows[0].key_hash).toBe(hashApiKey(key));
    expect(JSON.stringify(rows[0])).not.toContain(key);
    // No column of any key row holds a key (or its secret part) in the clear.
    const all = JSON.stringify((await api.db.pool.query('SELECT * FROM api_keys')).rows);
    expect(all).not.toContain('trawl_');
    const secret = key.slice('trawl_'.length);
    for (let i = 0; i + 6 <= secret.length; i++) expect(all, 'a piece of the secret is stored').not.toContain(secret.slice(i, i + 6));
  });

  it('key ids are random on their own: nothing of the key is in the id', async () => {
    for (let i = 0; i < 20; i++) {
      const { key, id } = await createApiKey(api.db.pool, 'ids');
      expect(id).toMatch(API_KEY_ID_PATTERN);
      const secret = key.slice('trawl_'.length);
      for (let j = 0; j + 4 <= secret.length; j++) expect(id.slice('key_'.length)).not.toContain(secret.slice(j, j + 4));
    }
  });

  it('the migration gives old keys new ids and they keep working', async () => {
    const db = await createTestDatabase('trawl_api_keys');
    try {
      await migrate(db.pool, API_MIGRATION_OWNER, API_MIGRATIONS.filter((m) => m.id === 1));
      // A key as the first version made it: its id is the start of its random part.
      const key = `trawl_${randomBytes(32).toString('base64url')}`;
      const oldId = key.slice(6, 16);
      await db.pool.query('INSERT INTO api_keys (id, user_id, key_hash) VALUES ($1, $2, $3)', [oldId, 'legacy', hashApiKey(key)]);
      await migrate(db.pool, API_MIGRATION_OWNER, API_MIGRATIONS);
      const { rows } = await db.pool.query<{ id: string }>('SELECT id FROM api_keys WHERE user_id = $1', ['legacy']);
      expect(rows).toHaveLength(1);
      expect(rows[0]!.id).toMatch(API_KEY_ID_PATTERN);
      expect(rows[0]!.id).not.toContain(oldId);
      expect(await userForApiKey(db.pool, key)).toBe('legacy');
      expect(await revokeApiKey(db.pool, rows[0]!.id)).toBe(true);
      expect(await userForApiKey(db.pool, key)).toBeUndefined();
    } finally {
      await db.drop();
    }
  });

  it('refuses user ids that are not printable and short', async () => {
    await expect(createApiKey(api.db.pool, 'bad user')).rejects.toMatchObject({ code: 'TRAWL_INVALID_USER_ID' });
    await expect(createApiKey(api.db.pool, '')).rejects.toMatchObject({ code: 'TRAWL_INVALID_USER_ID' });
  });

  it.each([
    ['no header', {}],
    ['a malformed header', { authorization: 'Token abc' }],
    ['an unknown key', { authorization: `Bearer trawl_${'A'.repeat(43)}` }],
    ['garbage', { authorization: 'Bearer ../../etc/passwd' }],
  ])('%s → 401 UNAUTHENTICATED', async (_name, headers) => {
    const res = await api.app.inject({ method: 'GET', url: '/jobs', headers });
    expect(res.statusCode).toBe(401);
    expect(res.json().error.code).toBe('UNAUTHENTICATED');
  });

  it('a revoked key stops working as soon as its revocation is heard (well within a second)', async () => {
    const { key, id } = await createApiKey(api.db.pool, 'revokee');
    const headers = { authorization: `Bearer ${key}` };
    await keyKnown(api.app, key);
    expect((await api.app.inject({ method: 'GET', url: '/jobs', headers })).statusCode).toBe(200);
    await revokeApiKey(api.db.pool, id);
    await eventually(async () => (await api.app.inject({ method: 'GET', url: '/jobs', headers })).statusCode === 401, 1_000, 10);
  });

  it('health, readiness (without its checks) and docs need no key; metrics do', async () => {
    for (const url of ['/healthz', '/readyz', '/docs/json']) {
      expect((await api.app.inject({ method: 'GET', url })).statusCode, url).toBe(200);
    }
    expect((await api.app.inject({ method: 'GET', url: '/readyz' })).json()).toEqual({ status: 'ready' });
    expect((await api.app.inject({ method: 'GET', url: '/metrics' })).statusCode).toBe(401);
  });
});

describe('rate limits per key', () => {
  it('answers 429 RATE_LIMITED with retry-after past the budget, per key', async () => {
    const limited = await startTestApi({ config: { rateLimitMax: 5, crawlRateLimitMax: 2 } });
    try {
      const a = await limited.user();
      const b = await limited.user();
      const codes = [];
      for (let i = 0; i < 7; i++) codes.push((await limited.app.inject({ method: 'GET', url: '/jobs', headers: a.auth })).statusCode);
      expect(codes).toEqual([200, 200, 200, 200, 200, 429, 429]);
      const last = await limited.app.inject({ method: 'GET', url: '/jobs', headers: a.auth });
      expect(last.json().error.code).toBe('RATE_LIMITED');
      expect(Number(last.headers['retry-after'])).toBeGreaterThan(0);
      // Another key has its own budget.
      expect((await limited.app.inject({ method: 'GET', url: '/jobs', headers: b.auth })).statusCode).toBe(200);
      // POST /crawl has its own, smaller one.
      const crawl = () => limited.app.inject({ method: 'POST', url: '/crawl', headers: b.auth, payload: { start_urls: ['http://a.test/'], depth: 0 } });
      expect([(await crawl()).statusCode, (await crawl()).statusCode, (await crawl()).statusCode]).toEqual([200, 200, 429]);
    } finally {
      await limited.close();
    }
  });
});

describe('isolation between users', () => {
  it("another user's job is a 404 on every job endpoint and absent from lists", async () => {
    const alice = await api.user('alice');
    const bob = await api.user('bob');
    // Finished, so that the SSE stream ends by itself and inject() returns.
    const job = await seedJob(api.db.pool, { user_id: alice.user, status: 'finished' });
    await seedPages(api.db.pool, job, 2);
    await seedItems(api.db.pool, job, [{ title: 'x' }]);
    for (const url of [`/jobs/${job}/status`, `/jobs/${job}/pages`, `/jobs/${job}/items`, `/jobs/${job}/items?format=csv`, `/jobs/${job}/logs`]) {
      expect((await api.app.inject({ method: 'GET', url, headers: alice.auth })).statusCode, url).toBe(200);
      const res = await api.app.inject({ method: 'GET', url, headers: bob.auth });
      expect(res.statusCode, url).toBe(404);
      expect(res.json().error.code).toBe('JOB_NOT_FOUND');
    }
    const cancel = await api.app.inject({ method: 'POST', url: `/jobs/${job}/cancel`, headers: bob.auth });
    expect(cancel.statusCode).toBe(404);
    expect((await api.app.inject({ method: 'GET', url: '/jobs', headers: bob.auth })).json().jobs).toEqual([]);
    expect((await api.app.inject({ method: 'GET', url: '/jobs', headers: alice.auth })).json().jobs.map((j: { job_id: string }) => j.job_id)).toContain(job);
  });

  it("a job just submitted by one user is invisible to another", async () => {
    const alice = await api.user('alice');
    const bob = await api.user('bob');
    const { job_id } = (await api.app.inject({ method: 'POST', url: '/crawl', headers: alice.auth, payload: { start_urls: ['http://a.test/'], depth: 0 } })).json();
    expect((await api.app.inject({ method: 'GET', url: `/jobs/${job_id}/status`, headers: bob.auth })).statusCode).toBe(404);
    expect((await api.app.inject({ method: 'GET', url: '/jobs', headers: bob.auth })).json().jobs).toEqual([]);
    // Identical request by bob: his own job, not alice's cached one.
    const bobs = (await api.app.inject({ method: 'POST', url: '/crawl', headers: bob.auth, payload: { start_urls: ['http://a.test/'], depth: 0 } })).json();
    expect(bobs).toMatchObject({ cached: false });
    expect(bobs.job_id).not.toBe(job_id);
  });

  it("another user's schedule, website and target are 404s", async () => {
    const alice = await api.user('alice');
    const bob = await api.user('bob');
    const sched = (await api.app.inject({
      method: 'POST', url: '/crawl', headers: alice.auth, payload: { start_urls: ['http://a.test/'], depth: 0, interval: '1h' },
    })).json();
    const site = (await api.app.inject({ method: 'POST', url: '/websites', headers: alice.auth, payload: { name: 'A', base_url: 'http://a.test/' } })).json();
    const target = (await api.app.inject({
      method: 'POST', url: '/targets', headers: alice.auth, payload: { website_id: site.id, url_template: 'http://a.test/?q={keywords}' },
    })).json();
    for (const [method, url, code] of [
      ['GET', `/schedules/${sched.schedule_id}`, 'SCHEDULE_NOT_FOUND'],
      ['POST', `/schedules/${sched.schedule_id}/cancel`, 'SCHEDULE_NOT_FOUND'],
      ['GET', `/websites/${site.id}`, 'WEBSITE_NOT_FOUND'],
      ['DELETE', `/websites/${site.id}`, 'WEBSITE_NOT_FOUND'],
      ['GET', `/targets/${target.id}`, 'TARGET_NOT_FOUND'],
      ['DELETE', `/targets/${target.id}`, 'TARGET_NOT_FOUND'],
    ] as const) {
      const res = await api.app.inject({ method, url, headers: bob.auth });
      expect(res.statusCode, url).toBe(404);
      expect(res.json().error.code).toBe(code);
    }
    expect((await api.app.inject({ method: 'GET', url: '/schedules', headers: bob.auth })).json().schedules).toEqual([]);
    expect((await api.app.inject({ method: 'GET', url: '/targets', headers: bob.auth })).json().targets).toEqual([]);
    // Bob cannot take over alice's website id either.
    const takeover = await api.app.inject({ method: 'PUT', url: `/websites/${site.id}`, headers: bob.auth, payload: { name: 'B', base_url: 'http://b.test/' } });
    expect(takeover.statusCode).toBe(409);
    expect(takeover.json().error.code).toBe('ID_TAKEN');
  });
});

/** Routes anyone may call: the console's page and files, the OpenAPI UI, health and Prometheus. */
const PUBLIC = /^\/(?:$|console$|assets\/|docs|healthz$|readyz$)/;

/** Query strings a route requires, so the walk reaches its ownership check rather than its validation. */
const REQUIRED_QUERY: Record<string, string> = { '/jobs/:id/pages/:fetch_id/content': '?format=html' };

/** The error code of an answer: Trawl's `{error: {code}}`, or the Firecrawl-shaped routes' (`/v1`, `/v2`) `{success: false, code}`. */
function errorCode(res: { json: () => { error?: { code?: string } | string; code?: string } }): string | undefined {
  const body = res.json();
  return typeof body.error === 'object' ? body.error.code : body.code;
}

function requestFor(route: Route, id: string, body: object = {}) {
  const hasBody = route.method === 'POST' || route.method === 'PUT' || route.method === 'PATCH';
  // A content hash is no id of a user's: any well-formed one, so that only ownership can refuse.
  const url = route.url.replace(/:sha256\b/g, 'a'.repeat(64)).replace(/:\w+/g, id) + (REQUIRED_QUERY[route.url] ?? '');
  return { method: route.method as 'GET', url, ...(hasBody ? { payload: body } : {}) };
}

describe('every route needs a valid key', () => {
  const wellFormedUnknown = `trawl_${'B'.repeat(43)}`;

  it('answers 401 UNAUTHENTICATED without a key, with a wrong one, or with a key where only a header is taken', async () => {
    const { key } = await api.user('walker');
    const routes = routeList(api.app).filter((r) => !PUBLIC.test(r.url));
    expect(routes.length).toBeGreaterThanOrEqual(25);
    const cases: [string, Record<string, string>, string][] = [
      ['no key', {}, ''],
      ['an unknown key', { authorization: `Bearer ${wellFormedUnknown}` }, ''],
      ['a malformed key', { authorization: 'Bearer not-a-key' }, ''],
      ['another scheme', { authorization: `Basic ${Buffer.from(`x:${key}`).toString('base64')}` }, ''],
      ['an unknown ?access_token=', {}, `?access_token=${wellFormedUnknown}`],
    ];
    let checked = 0;
    for (const route of routes) {
      for (const [name, headers, query] of cases) {
        const req = requestFor(route, '00000000-0000-4000-8000-000000000000');
        const res = await api.app.inject({ ...req, url: req.url + query, headers });
        expect(res.statusCode, `${route.method} ${route.url} with ${name}`).toBe(401);
        expect(errorCode(res)).toBe('UNAUTHENTICATED');
        checked++;
      }
      // A valid key in the query string opens only the routes made for browsers (WebSocket, EventSource).
      if (route.url !== '/events' && route.url !== '/jobs/:id/logs') {
        const req = requestFor(route, '00000000-0000-4000-8000-000000000000');
        const res = await api.app.inject({ ...req, url: `${req.url}?access_token=${key}` });
        expect(res.statusCode, `${route.method} ${route.url} with a valid ?access_token=`).toBe(401);
        checked++;
      }
    }
    console.info(`auth walk: ${routes.length} routes, ${checked} unauthenticated requests, all 401`);
  });

  it('refuses the feeds over a real socket: WebSocket /events and SSE /jobs/:id/logs', async () => {
    const alice = await api.user('alice');
    const job = await seedJob(api.db.pool, { user_id: alice.user, status: 'finished' });
    await api.app.listen({ port: 0, host: '127.0.0.1' });
    const { port } = api.app.server.address() as AddressInfo;
    const upgrade = (path: string, headers: Record<string, string>) =>
      new Promise<number>((resolve, reject) => {
        const ws = new WebSocket(`ws://127.0.0.1:${port}${path}`, { headers });
        // Handling the refusal means ending the request ourselves (ws then reports nothing more).
        ws.once('unexpected-response', (req, res) => {
          resolve(res.statusCode ?? 0);
          req.destroy();
        });
        ws.once('open', () => {
          ws.terminate();
          reject(new Error(`${path} opened`));
        });
      });
    expect(await upgrade('/events', {})).toBe(401);
    expect(await upgrade('/events', { authorization: `Bearer ${wellFormedUnknown}` })).toBe(401);
    expect(await upgrade(`/events?access_token=${wellFormedUnknown}`, {})).toBe(401);
    const sse = async (query: string) => (await fetch(`http://127.0.0.1:${port}/jobs/${job}/logs${query}`, { headers: { accept: 'text/event-stream' } })).status;
    expect(await sse('')).toBe(401);
    expect(await sse(`?access_token=${wellFormedUnknown}`)).toBe(401);
    expect(await sse(`?access_token=${alice.key}`)).toBe(200);
  });
});

describe("another user's ids, on every route that takes one", () => {
  it('answer 404 (a PUT: 409 ID_TAKEN), show none of the data and change nothing', async () => {
    const alice = await api.user('alice');
    const bob = await api.user('bob');
    const inject = (who: typeof alice, req: ReturnType<typeof requestFor>) => api.app.inject({ ...req, headers: who.auth });
    const marker = `alice-secret-${alice.user}`;
    const site = (await api.app.inject({ method: 'POST', url: '/websites', headers: alice.auth, payload: { name: marker, base_url: 'http://a.test/' } })).json();
    const target = (await api.app.inject({
      method: 'POST', url: '/targets', headers: alice.auth, payload: { website_id: site.id, name: marker, url_template: 'http://a.test/?q={keywords}' },
    })).json();
    const schedule = (await api.app.inject({ method: 'POST', url: '/schedules', headers: alice.auth, payload: { target_id: target.id, interval: '1h' } })).json();
    const job = await seedJob(api.db.pool, { user_id: alice.user, status: 'running' });
    await seedItems(api.db.pool, job, [{ title: marker }]);
    // A webhook inserted as the API would store it (creating one through the API resolves its URL).
    const webhook = randomUUID();
    await api.db.pool.query("INSERT INTO webhooks (id, user_id, url, events, secret) VALUES ($1, $2, 'https://a.test/hook', '{job.completed}', $3)", [webhook, alice.user, marker]);
    const secret = (await api.app.inject({ method: 'POST', url: '/secrets', headers: alice.auth, payload: { name: 'alice-key', value: marker } })).json();
    // A scrape's result and Firecrawl's crawl status are a job's, by its id.
    const ids: Record<string, string> = { jobs: job, scrape: job, v1: job, v2: job, schedules: schedule.schedule_id, websites: site.id, targets: target.id, webhooks: webhook, secrets: secret.name };
    const bobsSite = (await api.app.inject({ method: 'POST', url: '/websites', headers: bob.auth, payload: { name: 'B', base_url: 'http://b.test/' } })).json();
    const bodies: Record<string, object> = { websites: { name: 'B', base_url: 'http://b.test/' }, targets: { website_id: bobsSite.id, url_template: 'http://b.test/' }, webhooks: { active: false }, schedules: { overlap: 'allow' }, '/jobs/:id/reextract': { spec: { item_root: 'li' } } };
    const before = await aliceState();

    const withIds = routeList(api.app).filter((r) => r.url.includes('/:') && !PUBLIC.test(r.url));
    let checked = 0;
    for (const route of withIds) {
      const kind = route.url.split('/')[1]!;
      // Dead letters are only ever another user's through Kafka: console/test/dead-letters.test.ts covers them.
      if (kind === 'dead-letters') continue;
      expect(ids[kind], `no id of alice's for ${route.url}: add one to this walk`).toBeDefined();
      // A running job's log stream stays open for its owner; for another user it must be a 404 at once.
      const res = await inject(bob, requestFor(route, ids[kind]!, bodies[route.url] ?? bodies[kind]));
      const what = `${route.method} ${route.url} → ${res.statusCode} ${res.body}`;
      if (route.method === 'PUT') {
        expect(res.statusCode, what).toBe(409);
        expect(res.json().error.code, what).toBe('ID_TAKEN');
      } else {
        expect(res.statusCode, what).toBe(404);
        expect(errorCode(res), what).toMatch(/_NOT_FOUND$/);
      }
      expect(res.body, what).not.toContain(marker);
      expect(res.body, what).not.toContain(alice.user);
      checked++;
    }
    // Ids in query strings: the dashboard and the exports (the live feed's job_id: events-feed.test.ts).
    for (const url of [`/metrics/scrape?job_id=${job}`, `/jobs/${job}/items?format=csv`, `/jobs/${job}/items?format=ndjson`]) {
      const res = await api.app.inject({ method: 'GET', url, headers: bob.auth });
      expect(res.statusCode, url).toBe(404);
      expect(res.body, url).not.toContain(marker);
      checked++;
    }
    const letters = await api.app.inject({ method: 'GET', url: `/dead-letters?job_id=${job}`, headers: bob.auth });
    expect(letters.json()).toEqual({ dead_letters: [], next_cursor: null });
    expect(await aliceState()).toEqual(before);
    console.info(`isolation walk: ${checked} requests with another user's ids, all refused`);

    async function aliceState() {
      const get = async (url: string) => (await api.app.inject({ method: 'GET', url, headers: alice.auth })).json();
      return [await get(`/websites/${site.id}`), await get(`/targets/${target.id}`), await get(`/schedules/${schedule.schedule_id}`), (await get(`/jobs/${job}/status`)).status, await get(`/webhooks/${webhook}`)];
    }
  });
});

describe('keys never reach the logs', () => {
  it('neither the Authorization header nor ?access_token= appears in the log output', async () => {
    const lines: string[] = [];
    const logger = pino({ level: 'trace' }, { write: (line: string) => void lines.push(line) });
    const logged = await startTestApi({ logger });
    try {
      const alice = await logged.user('alice');
      const wrong = `trawl_${'C'.repeat(43)}`;
      const job = await seedJob(logged.db.pool, { user_id: alice.user, status: 'finished' });
      const requests: InjectOptions[] = [
        { method: 'GET', url: '/jobs', headers: alice.auth },
        { method: 'POST', url: '/crawl', headers: alice.auth, payload: { start_urls: ['http://a.test/'], depth: 0 } },
        { method: 'POST', url: '/crawl', headers: alice.auth, payload: { start_urls: ['ftp://a.test/'], depth: 0 } },
        { method: 'GET', url: `/jobs/${job}/logs?access_token=${alice.key}` },
        { method: 'GET', url: `/events?access_token=${alice.key}` },
        { method: 'GET', url: `/events?job_id=${job}&access_token=${wrong}` },
        { method: 'GET', url: '/jobs', headers: { authorization: `Bearer ${wrong}` } },
        { method: 'GET', url: '/no/such/route', headers: alice.auth },
      ];
      for (const r of requests) await logged.app.inject(r);
      const text = lines.join('');
      // The capture works: every request was logged.
      expect(lines.filter((l) => l.includes('"incoming request"')).length).toBe(requests.length);
      expect(text).toContain('access_token=[redacted]');
      for (const secret of [alice.key, wrong, alice.key.slice('trawl_'.length)]) expect(text).not.toContain(secret);
      expect(text).not.toMatch(/"authorization"\s*:/i);
    } finally {
      await logged.close();
    }
  });
});
