/** /healthz, /readyz against the real stack, Prometheus /metrics, and the OpenAPI document. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import trawlConsole from '@trawl/console';
import { endpoints, startOperatorServer } from '@trawl/streams';
import { buildApp } from '../src/app.ts';
import { ERROR_CODES } from '../src/errors.ts';
import { defaultReadinessChecks, runChecks } from '../src/health/readiness.ts';
import { keyKnown, startTestApi, type TestApi } from './support.ts';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api?.close();
});

describe('operations', () => {
  it('/healthz answers without touching dependencies', async () => {
    expect((await api.app.inject('/healthz')).json()).toEqual({ status: 'ok' });
  });

  it('/readyz checks Postgres, Kafka, the registry and ClickHouse of the real stack; each check only for a key', async () => {
    // No cache: a retry below must run a new round.
    const app = await buildApp({ pool: api.db.pool, producer: api.producer, readiness: defaultReadinessChecks(api.db.pool, api.kafka, endpoints()), mount: (app) => app.register(trawlConsole), config: { readyCacheMs: 0 } });
    try {
      const { auth } = await api.user();
      // Each check has 2 s: on a busy machine one may miss it once; ready within a few tries.
      let res = await app.inject({ url: '/readyz', headers: auth });
      for (let tries = 1; res.statusCode !== 200 && tries < 10; tries++) res = await app.inject({ url: '/readyz', headers: auth });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({
        status: 'ready',
        checks: { postgres: { ok: true }, kafka: { ok: true }, registry: { ok: true }, clickhouse: { ok: true } },
      });
      const bare = await app.inject('/readyz');
      expect(bare.statusCode).toBe(200);
      expect(bare.json()).toEqual({ status: 'ready' });
      const wrongKey = await app.inject({ url: '/readyz', headers: { authorization: `Bearer trawl_${'B'.repeat(43)}` } });
      expect(wrongKey.json()).toEqual({ status: 'ready' });
    } finally {
      await app.close();
    }
  });

  it('/readyz answers 503 without a key, and names the dependency that is down with one — credentials redacted', async () => {
    // fetch refuses a URL with credentials and quotes it whole in its error: the check must not echo it.
    // A registry that asks for a password answers these made-up ones 401; one that does not, 404.
    const registry = new URL(endpoints().schemaRegistryUrl);
    registry.pathname = '/no-such-registry';
    registry.username = 'reader';
    registry.password = 's3cret-pw';
    const down = { ...endpoints(), clickhouseUrl: 'http://writer:hunter2-pw@127.0.0.1:1', schemaRegistryUrl: registry.toString() };
    const app = await buildApp({ pool: api.db.pool, producer: api.producer, readiness: defaultReadinessChecks(api.db.pool, api.kafka, down), mount: (app) => app.register(trawlConsole) });
    try {
      const bare = await app.inject('/readyz');
      expect(bare.statusCode).toBe(503);
      expect(bare.json()).toEqual({ status: 'unready' });
      const { auth, key } = await api.user();
      await keyKnown(app, key);
      const res = await app.inject({ url: '/readyz', headers: auth });
      expect(res.statusCode).toBe(503);
      expect(res.json()).toMatchObject({
        status: 'unready',
        checks: { postgres: { ok: true }, clickhouse: { ok: false, error: expect.any(String) }, registry: { ok: false, error: expect.stringMatching(/answered (401|404)/) } },
      });
      expect(res.body).not.toMatch(/hunter2|s3cret|reader|writer/);
    } finally {
      await app.close();
    }
  });

  it('a burst of /readyz costs the dependencies one round of checks (one in flight, then the cache)', async () => {
    let rounds = 0;
    const real = defaultReadinessChecks(api.db.pool, api.kafka, endpoints());
    const counted = { ...real, postgres: async (signal: AbortSignal) => { rounds++; await real.postgres!(signal); } };
    const app = await buildApp({ pool: api.db.pool, producer: api.producer, readiness: counted, config: { readyCacheMs: 60_000 } });
    try {
      const { auth } = await api.user();
      const burst = await Promise.all(Array.from({ length: 100 }, (_, i) => app.inject({ url: '/readyz', ...(i % 2 ? { headers: auth } : {}) })));
      expect(new Set(burst.map((r) => r.json().status)).size).toBe(1);
      expect(rounds).toBe(1);
      // Within the cache's lifetime, later calls cost nothing either.
      await app.inject('/readyz');
      expect(rounds).toBe(1);
    } finally {
      await app.close();
    }
  });

  it('/readyz past its budget per client address answers from its last round, never 429 and never a new check; /healthz is not limited', async () => {
    let rounds = 0;
    const real = defaultReadinessChecks(api.db.pool, api.kafka, endpoints());
    const counted = { ...real, postgres: async (signal: AbortSignal) => { rounds++; await real.postgres!(signal); } };
    // No cache: every call within the budget runs a round; past it, the last round answers.
    const app = await buildApp({ pool: api.db.pool, producer: api.producer, readiness: counted, config: { healthRateLimitMax: 4, readyCacheMs: 0 } });
    try {
      const { auth } = await api.user();
      const from = (remoteAddress: string, url: string, headers = {}) => app.inject({ url, remoteAddress, headers });
      const codes = [];
      for (let i = 0; i < 10; i++) codes.push((await from('203.0.113.7', '/healthz')).statusCode);
      expect(codes).toEqual(Array(10).fill(200));
      for (let i = 0; i < 4; i++) expect((await from('203.0.113.7', '/readyz')).statusCode).toBe(200);
      expect(rounds).toBe(4);
      // Past the budget (a key buys none): the last round's answer, no check run.
      for (let i = 0; i < 20; i++) expect((await from('203.0.113.7', '/readyz', i % 2 ? auth : {})).statusCode).toBe(200);
      expect(rounds).toBe(4);
      // Another address has a budget of its own.
      expect((await from('198.51.100.9', '/readyz')).statusCode).toBe(200);
      expect(rounds).toBe(5);
      // The key's own budget is untouched: the same address still gets its API answers.
      expect((await from('203.0.113.7', '/jobs', auth)).statusCode).toBe(200);
    } finally {
      await app.close();
    }
  });

  it('the readiness check sends credentials in an endpoint as a header, and redacts any error that quotes them', async () => {
    const ch = new URL(endpoints().clickhouseUrl);
    ch.username = 'nobody-here';
    ch.password = 'not-the-password';
    const checks = defaultReadinessChecks(api.db.pool, api.kafka, { ...endpoints(), clickhouseUrl: ch.toString().replace(/\/$/, '') });
    const { clickhouse } = await runChecks({ clickhouse: checks.clickhouse! });
    // ClickHouse's /ping answers whoever asks; what matters is that fetch got a URL it accepts.
    expect(clickhouse).toMatchObject({ ok: true });
    const failing = await runChecks({ x: async () => { throw new Error('connect ECONNREFUSED postgres://trawl:pw-123@db:5432/trawl'); } });
    expect(failing.x!.error).toBe('connect ECONNREFUSED postgres://trawl:***@db:5432/trawl');
  });

  it('the operator port (the services\' bootstrap) answers /metrics, /healthz and /readyz in full without a key', async () => {
    const operator = await startOperatorServer({
      host: '127.0.0.1',
      port: 0,
      phase: () => 'running',
      registries: () => [api.app.metrics.registry],
      checks: () => ({ postgres: async () => void (await api.db.pool.query('SELECT 1')) }),
    });
    try {
      expect(await (await fetch(`${operator.url}/healthz`)).json()).toMatchObject({ status: 'ok' });
      expect(await (await fetch(`${operator.url}/readyz`)).json()).toMatchObject({ status: 'ready', checks: { postgres: { ok: true } } });
      const metrics = await fetch(`${operator.url}/metrics`);
      expect(metrics.status).toBe(200);
      expect(await metrics.text()).toContain('trawl_api_process_cpu_seconds_total');
    } finally {
      await operator.close();
    }
  });

  it('the live feed answers 503 FEED_UNAVAILABLE while it has no Kafka subscription', async () => {
    const { auth } = await api.user();
    const res = await api.app.inject({ method: 'GET', url: '/events', headers: auth });
    expect(res.statusCode).toBe(503);
    expect(res.json().error.code).toBe('FEED_UNAVAILABLE');
  });

  it('/metrics exposes request durations by route template and crawl outcomes', async () => {
    const { auth } = await api.user();
    await api.app.inject({ method: 'POST', url: '/crawl', headers: auth, payload: { start_urls: ['http://a.test/m'], depth: 0 } });
    await api.app.inject({ method: 'GET', url: '/jobs/00000000-0000-4000-8000-000000000000/status', headers: auth });
    expect((await api.app.inject('/metrics')).statusCode).toBe(401);
    const text = (await api.app.inject({ url: '/metrics', headers: auth })).body;
    expect(text).toContain('trawl_api_http_request_duration_seconds_bucket');
    expect(text).toMatch(/route="\/jobs\/:id\/status",status="404"/);
    expect(text).toMatch(/trawl_api_crawl_requests_total\{outcome="created"\} 1/);
    expect(text).toContain('trawl_api_process_cpu_seconds_total');
  });

  it('/docs serves the UI and an OpenAPI document of every route, with the error catalogue', async () => {
    expect((await api.app.inject('/docs')).statusCode).toBeLessThan(400);
    const doc = (await api.app.inject('/docs/json')).json();
    const paths = Object.keys(doc.paths);
    for (const p of ['/crawl', '/jobs', '/jobs/{id}/status', '/jobs/{id}/pages', '/jobs/{id}/items', '/jobs/{id}/logs', '/jobs/{id}/cancel', '/events',
      '/schedules', '/schedules/{id}', '/schedules/{id}/pause', '/schedules/{id}/resume', '/schedules/{id}/cancel', '/websites', '/websites/{id}',
      '/targets', '/targets/{id}', '/webhooks', '/webhooks/{id}', '/webhooks/{id}/deliveries', '/webhooks/{id}/deliveries/{delivery_id}/redeliver',
      '/webhooks/{id}/test', '/healthz', '/readyz']) {
      expect(paths, p).toContain(p);
    }
    expect(doc.paths['/crawl'].post.requestBody.content['application/json'].schema.required).toEqual(['start_urls', 'depth']);
    const schemas = JSON.stringify(doc.components.schemas);
    for (const code of ERROR_CODES) expect(schemas).toContain(code);
  });
});
