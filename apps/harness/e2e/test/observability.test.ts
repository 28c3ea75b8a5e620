/**
 * Operating a crawl (issue 25): every service's operator port scraped while a real crawl runs
 * (API → frontier → worker → projector-pg), its consumer series moving with the crawl; one trace id
 * from POST /crawl through every event's Kafka headers to the projector's write (spans exported
 * over OTLP to a collector in this test); a killed worker's /healthz refusing connections.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createTestSite, type TestSite } from '@trawl/demo-site';
import type { JobCompleted } from '@trawl/schemas';
import { readEvents, traceIdOf } from '@trawl/streams';
import { Pipeline, type Child } from '../src/pipeline.ts';

interface CollectedSpan {
  readonly service: string;
  readonly name: string;
  readonly traceId: string;
  readonly attributes: Record<string, string>;
}

/** An OTLP/HTTP JSON trace receiver: what the services export. */
async function startCollector(): Promise<{ url: string; spans: CollectedSpan[]; server: Server }> {
  const spans: CollectedSpan[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (d: Buffer) => (body += d.toString()));
    req.on('end', () => {
      try {
        const doc = JSON.parse(body) as { resourceSpans?: { resource?: { attributes?: Attr[] }; scopeSpans?: { spans?: { name: string; traceId: string; attributes?: Attr[] }[] }[] }[] };
        for (const rs of doc.resourceSpans ?? []) {
          const service = String(attrs(rs.resource?.attributes)['service.name']);
          for (const ss of rs.scopeSpans ?? []) for (const s of ss.spans ?? []) spans.push({ service, name: s.name, traceId: s.traceId, attributes: attrs(s.attributes) });
        }
      } catch {
        // not JSON: counted as nothing, and the assertions below say what is missing
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, spans, server };
}
type Attr = { key: string; value: Record<string, unknown> };
const attrs = (list: Attr[] | undefined) => Object.fromEntries((list ?? []).map((a) => [a.key, String(Object.values(a.value)[0])]));

/** Sums a metric's samples whose labels include `match`. */
async function scrape(child: Child, metric: string, match: Record<string, string> = {}): Promise<{ sum: number; samples: number }> {
  const text = await (await fetch(`${child.operatorUrl}/metrics`)).text();
  let sum = 0;
  let samples = 0;
  for (const line of text.split('\n')) {
    const m = /^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/.exec(line);
    if (!m || m[1] !== metric) continue;
    const labels = Object.fromEntries([...(m[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((x) => [x[1], x[2]]));
    if (Object.entries(match).every(([k, v]) => labels[k] === v)) {
      sum += Number(m[3]);
      samples++;
    }
  }
  return { sum, samples };
}

async function until<T>(what: string, probe: () => Promise<T | undefined>, timeoutMs = 60_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

let site: TestSite;
let pipeline: Pipeline | undefined;
let collector: Awaited<ReturnType<typeof startCollector>>;

beforeAll(async () => {
  site = await createTestSite({ pages: 20, linksPerPage: 3, itemsPerPage: 2 });
  collector = await startCollector();
});
afterAll(async () => {
  await pipeline?.stop();
  await site?.close();
  collector?.server.close();
});

describe('operating a crawl', () => {
  it('serves metrics and health on every service (all seven), and carries one trace from POST /crawl to the projector', async () => {
    pipeline = await Pipeline.start({
      // No loop watchdog: on a loaded host the API's start (schema compilation) can hold its loop past the limit.
      env: { OTEL_EXPORTER_OTLP_ENDPOINT: collector.url, OTEL_BSP_SCHEDULE_DELAY: '200', TRAWL_FETCH_TIMEOUT_MS: '5000', TRAWL_LOOP_LIMIT_MS: '0' },
    });
    const p = pipeline;
    const apiPort = 20_000 + Math.floor(Math.random() * 20_000);
    const frontier = p.spawn('frontier');
    const worker = p.spawn('worker');
    const projector = p.spawn('projector-pg');
    const api = p.spawn('api', { TRAWL_API_PORT: String(apiPort) });
    const dispatcher = p.spawn('dispatcher');
    const projectorCh = p.spawn('projector-ch');
    const webhooks = p.spawn('webhooks');
    const services = [frontier, worker, projector, api, dispatcher, projectorCh, webhooks];
    for (const s of services) {
      await until(`${s.app} ready`, async () => ((await fetch(`${s.operatorUrl}/readyz`)).status === 200 ? true : undefined), 90_000);
      expect(await (await fetch(`${s.operatorUrl}/healthz`)).json()).toMatchObject({ status: 'ok', phase: 'running' });
    }
    // The worker's /readyz shows whether Chromium will render sandboxed, as it logged at start.
    const workerReady = (await (await fetch(`${worker.operatorUrl}/readyz`)).json()) as { facts?: { browserSandbox?: { state?: string } } };
    expect(['on', 'off', 'unavailable']).toContain(workerReady.facts?.browserSandbox?.state);
    const before = await scrape(worker, 'trawl_consumer_messages_total', { outcome: 'processed' });
    expect(before.sum).toBe(0);

    const key = await p.createKey('ops');
    const res = await fetch(`http://127.0.0.1:${apiPort}/crawl`, {
      method: 'POST',
      headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
      body: JSON.stringify({ start_urls: [site.home], depth: 2, ignore_cache: true }),
    });
    expect(res.status).toBe(200);
    const { job_id: jobId } = (await res.json()) as { job_id: string };
    const traceId = traceIdOf(res.headers.get('traceparent') ?? undefined);
    expect(traceId).toMatch(/^[0-9a-f]{32}$/);

    await p.waitFor((events) => events.some((e) => e.event.name === 'JobCompleted' && (e.event.value as JobCompleted).job_id === jobId), 120_000, 'JobCompleted');

    // Every event of the job, on every topic, carries the request's trace id in its headers.
    const events = (await readEvents(p.kafka, p.codec, [p.topics.jobs, p.topics.fetch, p.topics.pages, p.topics.items])).filter(
      (e) => (e.event.value as { job_id?: string }).job_id === jobId,
    );
    const names = new Set(events.map((e) => e.event.name));
    for (const n of ['JobDispatched', 'FetchRequested', 'PageFetched', 'JobCompleted']) expect(names).toContain(n);
    const traceIds = new Set(events.map((e) => traceIdOf(e.headers.traceparent?.toString())));
    expect([...traceIds]).toEqual([traceId]);

    // The consumers' series moved with the crawl: every fetch processed, none dead-lettered, lag drained.
    const fetches = events.filter((e) => e.event.name === 'FetchRequested').length;
    await until('worker lag 0', async () => ((await scrape(worker, 'trawl_consumer_lag')).sum === 0 ? true : undefined));
    expect((await scrape(worker, 'trawl_consumer_messages_total', { outcome: 'processed' })).sum).toBe(fetches);
    expect((await scrape(worker, 'trawl_consumer_messages_total', { outcome: 'dead_lettered' })).sum).toBe(0);
    expect((await scrape(worker, 'trawl_consumer_lag')).samples).toBeGreaterThan(0);
    expect((await scrape(worker, 'trawl_consumer_handler_duration_seconds_count')).sum).toBe(fetches);
    expect((await scrape(worker, 'trawl_producer_events_total')).sum).toBeGreaterThanOrEqual(fetches);
    // The browser pool's series exist before Chromium starts (this crawl renders nothing): idle.
    expect(await scrape(worker, 'trawl_browser_renders_pending')).toMatchObject({ samples: 1, sum: 0 });
    expect(await scrape(worker, 'trawl_browser_tabs')).toMatchObject({ samples: 1, sum: 0 });
    const projected = await until('projector caught up', async () => {
      const applied = await scrape(projector, 'trawl_projection_events_total');
      const lag = await scrape(projector, 'trawl_projection_lag');
      return applied.sum > 0 && lag.sum === 0 ? applied : undefined;
    });
    expect(projected.sum).toBeGreaterThanOrEqual(events.filter((e) => e.event.name !== 'FetchRequested').length);
    expect((await scrape(frontier, 'trawl_projection_position')).samples).toBeGreaterThan(0);
    expect((await scrape(api, 'trawl_api_crawl_requests_total', { outcome: 'created' })).sum).toBe(1);
    // The other consumers of the job's events moved with it too; the dispatcher (no schedule due)
    // serves its process series.
    for (const s of [projectorCh, webhooks]) {
      await until(`${s.app} caught up`, async () => {
        const processed = await scrape(s, 'trawl_consumer_messages_total', { outcome: 'processed' });
        const lag = await scrape(s, 'trawl_consumer_lag');
        return processed.sum > 0 && lag.samples > 0 && lag.sum === 0 ? true : undefined;
      });
      expect((await scrape(s, 'trawl_consumer_messages_total', { outcome: 'dead_lettered' })).sum, s.app).toBe(0);
    }
    expect((await scrape(dispatcher, 'trawl_process_cpu_seconds_total')).samples).toBeGreaterThan(0);

    // The trace reaches the projector's write: its batch spans of this job are in the request's trace.
    const spansOf = (service: string) => collector.spans.filter((s) => s.service === `trawl-${service}` && s.traceId === traceId);
    await until('projector spans exported', async () => (spansOf('projector-pg').some((s) => s.name.startsWith('project ')) ? true : undefined), 30_000);
    expect(spansOf('api').map((s) => s.name)).toContain('POST /crawl');
    expect(spansOf('worker').some((s) => s.name === 'process FetchRequested' && s.attributes['trawl.job_id'] === jobId && s.attributes['trawl.fetch_id'])).toBe(true);
    expect(spansOf('frontier').some((s) => s.name.startsWith('project '))).toBe(true);
    expect(spansOf('projector-pg').some((s) => s.name.startsWith('project ') && s.attributes['trawl.job_id'] === jobId)).toBe(true);

    // A killed service: its health endpoint refuses connections.
    await p.kill(worker);
    await expect(fetch(`${worker.operatorUrl}/healthz`)).rejects.toThrow();
  }, 300_000);
});
