/**
 * Property-based fuzzing of every route the app serves (read from its own route tree, so a new
 * route is fuzzed without being listed here): random path ids, query strings and JSON bodies,
 * seeded from the route's OpenAPI schema and from a valid request where one is known. For every
 * input: never a 5xx; a refusal is a 4xx with the error shape, a catalogue code and, for a schema
 * failure, the field at fault; and a refused request changes nothing — no event produced, no row of
 * the caller's written.
 */
import { randomBytes } from 'node:crypto';
import { CONSOLE_ERRORS } from '@trawl/console';
import { ClickHouse, setupAnalytics } from '@trawl/projector-ch';
import { endpoints } from '@trawl/streams';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ERROR_CODES } from '../src/errors.ts';
import { seedJob } from './read-model.ts';
import { routeList, startTestApi, type Route, type TestApi } from './support.ts';

const RUNS_PER_ROUTE = Number(process.env.TRAWL_FUZZ_RUNS ?? 150);
const CODES = new Set<string>([...ERROR_CODES, ...Object.keys(CONSOLE_ERRORS)]);

/** Routes that are not the API's to fuzz: static files, the console page and the OpenAPI UI. */
const STATIC = /^\/(?:$|console$|assets\/|docs)/;

let api: TestApi;
/** The dashboard's ClickHouse tables, in a database of this file's own (the console reads CLICKHOUSE_DATABASE). */
let analytics: ClickHouse;
let user: string;
let auth: { authorization: string };
/** Ids the fuzz user owns, so that fuzzing also reaches past the ownership checks. */
let owned: { job: string; website: string; target: string; schedule: string };
let spec: { paths: Record<string, Record<string, OpenApiOperation>> };

interface OpenApiOperation {
  parameters?: { in: string; name: string }[];
  requestBody?: { content?: { 'application/json'?: { schema?: { properties?: Record<string, unknown> } } } };
}

beforeAll(async () => {
  analytics = new ClickHouse({ url: endpoints().clickhouseUrl, database: `trawl_api_fuzz_${randomBytes(4).toString('hex')}` });
  await setupAnalytics(analytics);
  process.env.CLICKHOUSE_DATABASE = analytics.database;
  api = await startTestApi({ live: true, config: { bodyLimit: 16 * 1024, rateLimitMax: 1_000_000, crawlRateLimitMax: 1_000_000 } });
  await api.app.liveFeed.ready;
  ({ user, auth } = await api.user('fuzz'));
  const post = async (url: string, payload: object) => (await api.app.inject({ method: 'POST', url, headers: auth, payload })).json();
  const website = (await post('/websites', { name: 'Fuzz', base_url: 'http://fuzz.test/' })).id;
  const target = (await post('/targets', { website_id: website, url_template: 'http://fuzz.test/?q={keywords}' })).id;
  const schedule = (await post('/schedules', { target_id: target, interval: '1h' })).schedule_id;
  // Finished, so that its SSE log stream ends by itself.
  owned = { job: await seedJob(api.db.pool, { user_id: user, status: 'finished' }), website, target, schedule };
  spec = (api.app as unknown as { swagger(): typeof spec }).swagger();
});
afterAll(async () => {
  await api?.close();
  await analytics?.exec(`DROP DATABASE IF EXISTS ${analytics.database}`, { database: null });
});

/** A request known to be accepted, for the routes that take a body: fuzzing mutates it. */
function validBody(route: Route): Record<string, unknown> | undefined {
  const bodies: Record<string, Record<string, unknown>> = {
    '/crawl': { start_urls: ['http://fuzz.test/'], depth: 1 },
    '/websites': { name: 'Fuzz', base_url: 'http://fuzz.test/' },
    '/websites/:id': { name: 'Fuzz', base_url: 'http://fuzz.test/' },
    '/targets': { website_id: owned.website, url_template: 'http://fuzz.test/?q={keywords}' },
    '/targets/:id': { website_id: owned.website, url_template: 'http://fuzz.test/?q={keywords}' },
    '/schedules': { target_id: owned.target, interval: '1h' },
  };
  return bodies[route.url];
}

function operation(route: Route): OpenApiOperation | undefined {
  return spec.paths[route.url.replace(/:(\w+)/g, '{$1}')]?.[route.method.toLowerCase()];
}

/** Nasty strings: empty, huge, control characters, encodings, numbers that are not, injections. */
const nasty = fc.constantFrom(
  '', ' ', '0', '-1', '1e309', 'NaN', 'null', 'true', '[]', '{}', '%00', '\u0000', '../../etc/passwd', "' OR 1=1 --",
  '<script>', 'x'.repeat(5000), '🦀', '\uD800', '2030-13-45T25:61:00Z', '00000000-0000-4000-8000-000000000000', 'http://169.254.169.254/',
);
const text = fc.oneof(fc.string(), fc.string({ unit: 'binary', maxLength: 40 }), nasty);
const value = fc.oneof(text, fc.jsonValue({ maxDepth: 3 }));

/** Percent-encodes a string's UTF-8 bytes (a lone surrogate becomes U+FFFD; encodeURIComponent would throw). */
const percentEncoded = (s: string) => [...Buffer.from(s)].map((b) => `%${b.toString(16).padStart(2, '0')}`).join('');

/** A path with its `:params` replaced by an owned id, a random string or a nasty one. */
function pathArb(route: Route): fc.Arbitrary<string> {
  const ids = fc.oneof(fc.constantFrom(...Object.values(owned)), text.map(percentEncoded), fc.constantFrom('%', '%zz', '..', '%2e%2e%2f', 'a'.repeat(300)));
  const names = [...route.url.matchAll(/:(\w+)/g)];
  return fc.tuple(...names.map(() => ids)).map((values) => {
    let i = 0;
    return route.url.replace(/:(\w+)/g, () => values[i++]!);
  });
}

/** A query string from the route's documented parameters and others, or raw junk. */
function queryArb(route: Route): fc.Arbitrary<string> {
  const documented = (operation(route)?.parameters ?? []).filter((p) => p.in === 'query').map((p) => p.name);
  const key = fc.oneof(fc.constantFrom(...documented, 'access_token', '__proto__', 'constructor'), fc.string({ maxLength: 8 }));
  const pairs = fc.array(fc.tuple(key, fc.oneof(text, fc.integer().map(String))), { maxLength: 5 }).map((kv) => new URLSearchParams(kv).toString());
  const raw = fc.constantFrom('%', '%%%', '%zz=1', '&&=', '=x', 'a[b]=1', 'limit=1&limit=2', 'cursor=%ff%fe');
  return fc.oneof(pairs, pairs, raw).map((q) => (q ? `?${q}` : ''));
}

/** A JSON text: a valid body with fields replaced, added or removed, any JSON value, or not JSON at all. */
function bodyArb(route: Route): fc.Arbitrary<string> {
  const valid = validBody(route) ?? {};
  const fields = Object.keys(operation(route)?.requestBody?.content?.['application/json']?.schema?.properties ?? valid);
  const key = fc.oneof(fc.constantFrom(...fields, '__proto__', 'constructor', 'x'), fc.string({ maxLength: 8 }));
  const mutated = fc
    .tuple(fc.dictionary(key, value, { maxKeys: 4 }), fc.subarray(Object.keys(valid)))
    .map(([changes, dropped]) => {
      const body: Record<string, unknown> = { ...valid };
      for (const k of dropped) delete body[k];
      for (const [k, v] of Object.entries(changes)) Object.defineProperty(body, k, { value: v, enumerable: true });
      return JSON.stringify(body);
    });
  return fc.oneof({ arbitrary: mutated, weight: 4 }, fc.jsonValue().map((v) => JSON.stringify(v)), text);
}

/** Everything the fuzz user owns, as text: a refused request must leave it as it was. */
async function ownedState(): Promise<string> {
  const { rows } = await api.db.pool.query(
    `SELECT (SELECT json_agg(x ORDER BY x.job_id) FROM api_jobs x WHERE user_id = $1)::text AS api_jobs,
            (SELECT json_agg(x ORDER BY x.dedupe_key) FROM crawl_dedupe x WHERE user_id = $1)::text AS dedupe,
            (SELECT json_agg(x ORDER BY x.id) FROM websites x WHERE owner_id = $1)::text AS websites,
            (SELECT json_agg(x ORDER BY x.id) FROM targets x WHERE owner_id = $1)::text AS targets,
            (SELECT json_agg(x ORDER BY x.id) FROM schedules x WHERE owner_id = $1)::text AS schedules,
            (SELECT json_agg(x ORDER BY x.job_id) FROM jobs x WHERE user_id = $1)::text AS jobs`,
    [user],
  );
  return JSON.stringify(rows[0]);
}

describe('every route, fuzzed with fast-check', () => {
  it('never answers a 5xx; refuses with a 4xx naming the reason; a refusal changes nothing', async () => {
    const routes = routeList(api.app).filter((r) => !STATIC.test(r.url));
    // The walk must find the API's routes and the console's: a broken route list fuzzes nothing.
    for (const known of ['POST /crawl', 'GET /jobs', 'GET /jobs/:id/items', 'PUT /targets/:id', 'GET /metrics/scrape', 'POST /dead-letters/:id/redrive']) {
      expect(routes.map((r) => `${r.method} ${r.url}`)).toContain(known);
    }
    const tried = new Map<string, number>();
    const statuses = new Map<number, number>();
    const started = performance.now();
    for (const route of routes) {
      const hasBody = route.method === 'POST' || route.method === 'PUT';
      const input = fc.record({ path: pathArb(route), query: queryArb(route), body: hasBody ? bodyArb(route) : fc.constant(undefined) });
      await fc.assert(
        fc.asyncProperty(input, async ({ path, query, body }) => {
          // A job that a fuzzed request started is running for good (no pipeline here): its log stream would never end.
          if (route.url === '/jobs/:id/logs' && !path.includes(owned.job)) path = `/jobs/${owned.job}/logs`;
          const before = { state: await ownedState(), emitted: api.emitted.length };
          const res = await api.app.inject({
            method: route.method as 'GET',
            url: path + query,
            headers: { ...auth, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
            ...(body === undefined ? {} : { payload: body }),
          });
          tried.set(`${route.method} ${route.url}`, (tried.get(`${route.method} ${route.url}`) ?? 0) + 1);
          statuses.set(res.statusCode, (statuses.get(res.statusCode) ?? 0) + 1);
          const what = `${route.method} ${path}${query} ${body ?? ''} → ${res.statusCode} ${res.body.slice(0, 300)}`;
          expect(res.statusCode, what).toBeLessThan(500);
          if (res.statusCode < 400) return;
          // Firecrawl's API shapes (routes/firecrawl.ts) refuse as Firecrawl does: `{success: false, error, code}`.
          const json = res.json() as { error: { code: string; message: string; field?: string } | string; code?: string; field?: string };
          const error = typeof json.error === 'string' ? { code: json.code ?? '', message: json.error, field: json.field } : json.error;
          expect(CODES.has(error.code), what).toBe(true);
          expect(error.message.length, what).toBeGreaterThan(0);
          if (error.code === 'VALIDATION_FAILED' && error.field === undefined) expect(error.message, what).toMatch(/\b(body|querystring|params|request)\b/);
          expect(api.emitted.length, `${what}: a refused request produced an event`).toBe(before.emitted);
          expect(await ownedState(), `${what}: a refused request changed the caller's rows`).toBe(before.state);
        }),
        // A request that hangs is a failure too, with its input as the counterexample.
        { numRuns: RUNS_PER_ROUTE, timeout: 10_000 },
      );
    }
    const total = [...tried.values()].reduce((a, b) => a + b, 0);
    console.info(
      `fuzzed ${routes.length} routes with ${total} inputs in ${Math.round(performance.now() - started)} ms; statuses ${JSON.stringify(Object.fromEntries(statuses))}`,
    );
    expect(tried.size).toBe(routes.length);
    expect(total).toBe(routes.length * RUNS_PER_ROUTE);
  }, 900_000);
});
