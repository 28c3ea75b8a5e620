/** /healthz, /readyz against the real stack, Prometheus /metrics, and the OpenAPI document. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { endpoints } from '@trawl/streams';
import { buildApp } from '../src/app.ts';
import { ERROR_CODES } from '../src/errors.ts';
import { defaultReadinessChecks } from '../src/health/readiness.ts';
import { startTestApi, type TestApi } from './support.ts';

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

  it('/readyz checks Postgres, Kafka, the registry and ClickHouse of the real stack', async () => {
    const app = await buildApp({ pool: api.db.pool, producer: api.producer, readiness: defaultReadinessChecks(api.db.pool, api.kafka, endpoints()) });
    try {
      // Each check has 2 s: on a busy machine one may miss it once; ready within a few tries.
      let res = await app.inject('/readyz');
      for (let tries = 1; res.statusCode !== 200 && tries < 10; tries++) res = await app.inject('/readyz');
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json()).toMatchObject({
        status: 'ready',
        checks: { postgres: { ok: true }, kafka: { ok: true }, registry: { ok: true }, clickhouse: { ok: true } },
      });
    } finally {
      await app.close();
    }
  });

  it('/readyz answers 503 naming the dependency that is down', async () => {
    const down = { ...endpoints(), clickhouseUrl: 'http://127.0.0.1:1' };
    const app = await buildApp({ pool: api.db.pool, producer: api.producer, readiness: defaultReadinessChecks(api.db.pool, api.kafka, down) });
    try {
      const res = await app.inject('/readyz');
      expect(res.statusCode).toBe(503);
      expect(res.json()).toMatchObject({ status: 'unready', checks: { postgres: { ok: true }, clickhouse: { ok: false, error: expect.any(String) } } });
    } finally {
      await app.close();
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
    const text = (await api.app.inject('/metrics')).body;
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
      '/targets', '/targets/{id}', '/healthz', '/readyz']) {
      expect(paths, p).toContain(p);
    }
    expect(doc.paths['/crawl'].post.requestBody.content['application/json'].schema.required).toEqual(['start_urls', 'depth']);
    const schemas = JSON.stringify(doc.components.schemas);
    for (const code of ERROR_CODES) expect(schemas).toContain(code);
  });
});
