/**
 * A crawl in which one page never finishes in the worker: its fetch exits the process, blocks the
 * event loop, or never returns. The worker runs as production runs it (its own wiring, in a child
 * process, on topics of its own and a throw-away database, beside a real frontier), and this test
 * restarts it whenever it dies, as a supervisor would. After TRAWL_MAX_DELIVERIES (3) deliveries
 * the page's FetchRequested is in trawl.fetch.dlq as `poison`, the worker's partitions have moved
 * past it (committed to their ends), and the job completes with exactly that one failure.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { samples, type FetchRequested, type JobCompleted, type PageFailed } from '@trawl/schemas';
import { endOffsets, readEvents, readTopics, TRAWL_HEADERS } from '@trawl/streams';
import { committedOffsets, poisonWorld, type AppProcess } from '@trawl/streams/testing';
import { crawlSpec } from '@trawl/store';
import { createTestDatabase } from '@trawl/store/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const FIXTURE = fileURLToPath(new URL('./fixtures/misbehaving-worker.ts', import.meta.url));
const LEAVES = 10;
const MAX_DELIVERIES = 3;

const world = poisonWorld('poison-pages', { database: () => createTestDatabase('trawl_test_poison_pages') });
const topics = {
  jobs: world.topic('trawl.jobs'),
  pages: world.topic('trawl.pages'),
  fetch: world.topic('trawl.fetch'),
  dlq: world.topic('trawl.fetch.dlq'),
  tiers: [1, 2, 3].map((n) => world.topic(`trawl.fetch.retry.${n}`)),
};
let site: Server;
let origin: string;
let dir: string;

beforeAll(async () => {
  site = createServer((req, res) => {
    if (req.url === '/robots.txt') return void res.writeHead(404).end();
    const [, section, leaf] = /^\/([a-z]+)\/(?:p\/(\d+))?$/.exec(req.url ?? '') ?? [];
    if (!section) return void res.writeHead(404).end();
    const links = leaf === undefined ? Array.from({ length: LEAVES }, (_, i) => `<a href="/${section}/p/${i}">${i}</a>`).join(' ') : '';
    res.writeHead(200, { 'content-type': 'text/html' }).end(`<html><body><h1>${req.url}</h1>${links}</body></html>`);
  });
  await new Promise<void>((resolve) => site.listen(0, '127.0.0.1', resolve));
  origin = `http://127.0.0.1:${(site.address() as AddressInfo).port}`;
  dir = mkdtempSync(join(tmpdir(), 'trawl-poison-pages-'));
  await world.startApp('frontier', { readyWhen: '"partitions assigned"' });
}, 120_000);

afterAll(async () => {
  await world.close();
  await new Promise((resolve) => site?.close(resolve));
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const lines = (file: string) => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter(Boolean) : []);

interface Outcome {
  readonly completed: JobCompleted;
  readonly failed: PageFailed[];
  /** How the worker processes that died on their own ended (exit code or signal), in order. */
  readonly deaths: (number | string)[];
  readonly entered: number;
  /** From the JobDispatched to the JobCompleted. */
  readonly ms: number;
}

/**
 * Crawls `/<action>/` (a page linking to LEAVES leaves) with a worker whose fetch of leaf 7
 * misbehaves as `action` says, restarting the worker each time it dies, until the job completes.
 */
async function crawlWithMisbehavingPage(action: 'exit' | 'block' | 'hang', env: Record<string, string>): Promise<Outcome> {
  const out = join(dir, `${action}.log`);
  const misbehaving = `${origin}/${action}/p/7`;
  const start = () =>
    world.startApp('worker', {
      script: FIXTURE,
      readyWhen: '"partitions assigned"',
      env: {
        TRAWL_FETCH_ALLOW: new URL(origin).host,
        TRAWL_FETCH_RETRY_DELAYS_MS: '200,200,200',
        TRAWL_SESSION_TIMEOUT_MS: '6000',
        TRAWL_MAX_DELIVERIES: String(MAX_DELIVERIES),
        MISBEHAVING_URL: misbehaving,
        ACTION: action,
        OUT_FILE: out,
        ...env,
      },
    });
  let worker: AppProcess = await start();
  const deaths: (number | string)[] = [];
  const jobId = randomUUID();
  const dispatchedAt = Date.now();
  await world.producer.emit(
    'JobDispatched',
    { ...samples.JobDispatched, job_id: jobId, start_urls: [`${origin}/${action}/`], spec: crawlSpec(null, { depth: 1, max_pages: 100 }) },
    { topic: topics.jobs, eventId: randomUUID() },
  );
  const deadline = Date.now() + 240_000;
  for (;;) {
    const events = (await readEvents(world.kafka, world.codec, [topics.jobs, topics.pages])).map((e) => e.event).filter((e) => (e.value as { job_id?: string }).job_id === jobId);
    const completed = events.find((e) => e.name === 'JobCompleted')?.value as JobCompleted | undefined;
    if (completed) {
      const stopped = new Promise((resolve) => (worker.running() ? worker.child.once('exit', resolve) : resolve(null)));
      worker.child.kill('SIGTERM');
      await stopped;
      const ms = Date.now() - dispatchedAt;
      const outcome = { completed, failed: events.filter((e) => e.name === 'PageFailed').map((e) => e.value as PageFailed), deaths, entered: lines(out).length, ms };
      console.info(`POISON worker ${action} ${JSON.stringify({ deliveries: outcome.entered, deaths, pagesFetched: completed.pages_fetched, pagesFailed: completed.pages_failed, dispatchToCompletedMs: ms })}`);
      return outcome;
    }
    if (!worker.running()) {
      deaths.push(worker.child.exitCode ?? worker.child.signalCode ?? 'unknown');
      worker = await start();
    }
    if (Date.now() > deadline) throw new Error(`job ${jobId} not completed; deaths ${deaths.join(', ')}; worker log:\n${worker.tail()}`);
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** The page's FetchRequested is the one poison dead letter, and every partition of the worker's topics is committed to its end. */
async function expectPoisonedAndPast(url: string): Promise<void> {
  const dead = [];
  for (const m of await readTopics(world.kafka, [topics.dlq])) {
    const event = await world.codec.decode(m.value);
    if ((event.value as FetchRequested).url === url) dead.push(m);
  }
  expect(dead).toHaveLength(1);
  expect(dead[0]!.headers[TRAWL_HEADERS.deadLetterReason]?.toString()).toBe('poison');
  expect(dead[0]!.headers[TRAWL_HEADERS.errorCode]?.toString()).toBe('TRAWL_POISON');
  const group = `${world.prefix}trawl-worker`;
  for (const topic of [topics.fetch, ...topics.tiers]) {
    const ends = await endOffsets(world.kafka, [topic]);
    const committed = await committedOffsets(world.kafka, group, topic);
    for (const [key, end] of ends) {
      const partition = Number(key.slice(key.lastIndexOf(':') + 1));
      if (end > 0n) expect(committed.get(partition), `${key} committed to its end`).toBe(end);
    }
  }
}

function expectOneFailure(o: Outcome, url: string): void {
  expect(o.completed.pages_fetched).toBe(LEAVES); // the section page and the 9 other leaves
  expect(o.completed.pages_failed).toBe(1);
  expect(o.failed.map((f) => `${f.url} ${f.error_code}`), JSON.stringify(o.failed.map((f) => ({ url: f.url, code: f.error_code, message: f.error_message, event: f.event_id })))).toEqual([`${url} TRAWL_POISON`]);
  expect(o.entered).toBe(MAX_DELIVERIES);
}

describe('a crawl with a page the worker never finishes', () => {
  it('exits the worker: after 3 deliveries the fetch is poison, the partition moves past it, the job completes with that one failure', async () => {
    const o = await crawlWithMisbehavingPage('exit', {});
    expect(o.deaths).toEqual([3, 3, 3]);
    expectOneFailure(o, `${origin}/exit/p/7`);
    await expectPoisonedAndPast(`${origin}/exit/p/7`);
  }, 300_000);

  it('blocks the event loop: the watchdog kills the worker each time, and after 3 deliveries the same', async () => {
    const o = await crawlWithMisbehavingPage('block', { TRAWL_LOOP_LIMIT_MS: '3000' });
    expect(o.deaths).toEqual(['SIGKILL', 'SIGKILL', 'SIGKILL']);
    expectOneFailure(o, `${origin}/block/p/7`);
    await expectPoisonedAndPast(`${origin}/block/p/7`);
  }, 300_000);

  it('never returns: the page budget stops it three times, through the retry tiers, and the worker never dies', async () => {
    const o = await crawlWithMisbehavingPage('hang', { TRAWL_PAGE_BUDGET_MS: '2000' });
    expect(o.deaths).toEqual([]);
    expectOneFailure(o, `${origin}/hang/p/7`);
    await expectPoisonedAndPast(`${origin}/hang/p/7`);
  }, 300_000);
});
