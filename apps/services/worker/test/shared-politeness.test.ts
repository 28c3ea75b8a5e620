/**
 * Politeness on a host shared by jobs, through the real worker (its own wiring, in a child
 * process, on topics of its own) and real Kafka, against local HTTP servers that count what they see:
 *
 * - two jobs on one host, one asking 64 in flight and no delay, the other 1 in flight and 1000 ms
 *   apart: the strict job's own requests are 1 in flight, starts about 1000 ms apart, while the
 *   other job's requests run at once beside them (a job's policy is its own, not the host's);
 * - a host answering 429 Retry-After: 600 does not hold the worker's consumer slots: another host's
 *   fetch on the same trawl.fetch partition runs within seconds, while the 429 host's fetches wait
 *   in the retry tiers, deferred.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { samples, type CrawlSpec, type PageFetched } from '@trawl/schemas';
import { readEvents, readTopics, TRAWL_HEADERS } from '@trawl/streams';
import { poisonWorld, waitFor } from '@trawl/streams/testing';
import { crawlSpec } from '@trawl/store';
import { createTestDatabase } from '@trawl/store/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const world = poisonWorld('shared-politeness', { database: () => createTestDatabase('trawl_test_shared_politeness') });
const topics = {
  fetch: world.topic('trawl.fetch'),
  pages: world.topic('trawl.pages'),
  tiers: [1, 2, 3].map((n) => world.topic(`trawl.fetch.retry.${n}`)),
};
const servers: Server[] = [];

interface Site {
  readonly origin: string;
  readonly starts: number[];
  peak: number;
  /** Request starts and the most in flight at once, by the path's first segment (`/polite/0` → `polite`). */
  readonly by: Map<string, { starts: number[]; inFlight: number; peak: number }>;
}

async function site(answer: (req: IncomingMessage, res: ServerResponse) => void): Promise<Site> {
  let inFlight = 0;
  const s: Site & { origin: string } = { origin: '', starts: [], peak: 0, by: new Map() };
  const server = createServer((req, res) => {
    if (req.url === '/robots.txt') return void res.writeHead(404).end();
    const kind = (req.url ?? '/').split('/')[1] ?? '';
    if (!s.by.has(kind)) s.by.set(kind, { starts: [], inFlight: 0, peak: 0 });
    const of = s.by.get(kind)!;
    inFlight++;
    of.inFlight++;
    s.peak = Math.max(s.peak, inFlight);
    of.peak = Math.max(of.peak, of.inFlight);
    s.starts.push(Date.now());
    of.starts.push(Date.now());
    res.on('close', () => {
      inFlight--;
      of.inFlight--;
    });
    answer(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  servers.push(server);
  s.origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return s;
}

const slowPage = (_req: IncomingMessage, res: ServerResponse) => void setTimeout(() => res.writeHead(200, { 'content-type': 'text/html' }).end('<html><body>ok</body></html>'), 150);

/** Every FetchRequested goes to one partition (same key), as fetches of hosts that hash together do. */
function fetchRequested(jobId: string, url: string, spec: CrawlSpec, key = 'shared-partition'): Promise<string> {
  const { event_id: _id, occurred_at: _at, causation_id: _c, ...body } = { ...samples.FetchRequested, job_id: jobId, fetch_id: randomUUID(), url, depth: 0, referrer: null, spec };
  return world.producer.emit('FetchRequested', body, { topic: topics.fetch, key, eventId: randomUUID() });
}

async function pagesFetched(jobIds: readonly string[]): Promise<PageFetched[]> {
  return (await readEvents(world.kafka, world.codec, [topics.pages]))
    .map((e) => e.event)
    .filter((e) => e.name === 'PageFetched' && jobIds.includes((e.value as PageFetched).job_id))
    .map((e) => e.value as PageFetched);
}

beforeAll(async () => {
  await world.startApp('worker', {
    readyWhen: '"partitions assigned"',
    // Each test starts its hosts after the worker, on ports not known here: loopback whole, the
    // stack's ports with it, said explicitly (the worker refuses such a list otherwise).
    env: { TRAWL_FETCH_ALLOW: '127.0.0.0/8', TRAWL_FETCH_ALLOW_STACK: '1', TRAWL_WORKER_CONCURRENCY: '4', TRAWL_FETCH_RETRY_DELAYS_MS: '2000,30000,300000' },
  });
}, 120_000);

afterAll(async () => {
  await world.close();
  await Promise.all(servers.map((s) => new Promise((resolve) => s.close(resolve))));
});

describe('politeness on a host shared by jobs', () => {
  it("a 1 in flight / 1000 ms job's policy slows its own fetches only: a 64 / 0 ms job's fetches on the same host run at once beside them", async () => {
    const host = await site(slowPage);
    const greedy = randomUUID();
    const polite = randomUUID();
    const greedySpec = crawlSpec(null, { depth: 0, max_pages: 10 });
    const politeSpec = { ...greedySpec, host_concurrency: 1, host_delay_ms: 1000 };
    const PAGES = 4;
    // The polite job is known on the host first, then both jobs' fetches arrive interleaved: the
    // polite job's policy was the host's for everyone before.
    await fetchRequested(polite, `${host.origin}/polite/0`, politeSpec);
    await waitFor(() => host.starts.length === 1, { timeoutMs: 60_000, message: "the polite job's first fetch" });
    for (let i = 0; i < PAGES; i++) {
      await fetchRequested(greedy, `${host.origin}/greedy/${i}`, { ...greedySpec, host_concurrency: 64, host_delay_ms: 0 });
      if (i > 0) await fetchRequested(polite, `${host.origin}/polite/${i}`, politeSpec);
    }
    await waitFor(async () => (await pagesFetched([greedy, polite])).length === 2 * PAGES, { timeoutMs: 90_000, intervalMs: 500, message: 'all pages fetched' });
    const politeStarts = host.by.get('polite')!.starts;
    const greedyStarts = host.by.get('greedy')!.starts;
    const gaps = politeStarts.slice(1).map((t, i) => t - politeStarts[i]!);
    const greedySpanMs = Math.max(...greedyStarts) - Math.min(...greedyStarts);
    console.info(
      `POLITENESS shared host ${JSON.stringify({ requests: host.starts.length, politeMaxInFlight: host.by.get('polite')!.peak, politeGapsMs: gaps, greedyMaxInFlight: host.by.get('greedy')!.peak, greedySpanMs })}`,
    );
    expect(host.starts).toHaveLength(2 * PAGES);
    // The strict job is slowed: its own requests one at a time, 1000 ms apart (starts as the server
    // sees them carry connection set-up jitter; over the run they are 1000 ms apart).
    expect(host.by.get('polite')!.peak).toBe(1);
    expect(politeStarts.at(-1)! - politeStarts[0]!).toBeGreaterThanOrEqual((PAGES - 1) * 1000 - 300);
    // The other job is not: its four requests start together (before, 1000 ms apart: ≥ 3000 ms end to end).
    expect(greedySpanMs).toBeLessThan(2000);
  }, 120_000);

  it('a host answering 429 Retry-After: 600 delays another host on the same partition by < 5 s; its fetches wait deferred in the retry tiers', async () => {
    const limited = await site((_req, res) => void res.writeHead(429, { 'retry-after': '600', 'content-type': 'text/plain' }).end('slow down'));
    const other = await site(slowPage);
    const spec = { ...crawlSpec(null, { depth: 0, max_pages: 10 }), host_concurrency: 1 };
    const job = randomUUID();
    for (let i = 0; i < 8; i++) await fetchRequested(job, `${limited.origin}/p/${i}`, spec);
    await waitFor(() => limited.starts.length >= 1, { timeoutMs: 60_000, message: 'the 429 host asked' });
    // Let the worker take on the rest of the 429 host's fetches before the other host's arrives.
    await new Promise((r) => setTimeout(r, 1_000));
    const sentAt = Date.now();
    await fetchRequested(job, `${other.origin}/elsewhere`, spec);
    await waitFor(() => other.starts.length >= 1, { timeoutMs: 60_000, message: "the other host's fetch" });
    const delayMs = other.starts[0]! - sentAt;
    const deferred = (await readTopics(world.kafka, topics.tiers)).filter((m) => m.headers[TRAWL_HEADERS.deferrals] !== undefined);
    console.info(`POLITENESS 429 host ${JSON.stringify({ otherHostDelayMs: delayMs, limitedHostRequests: limited.starts.length, deferredForwards: deferred.length })}`);
    expect(delayMs).toBeLessThan(5_000);
    expect(limited.starts).toHaveLength(1); // the pause holds: nobody asked it again
    expect(deferred.length).toBeGreaterThanOrEqual(1);
  }, 120_000);
});
