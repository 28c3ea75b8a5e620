/**
 * A bystander's crawl beside another user's pages whose parse runs for seconds (issue 32, item 1):
 * the hostile-tenant suite's slow-selector row, repeated in alternating rounds on one pipeline (API,
 * frontier, one worker both users share, projector-pg) so that a busy machine's swings fall on both
 * sides alike. The target: beside, within 20% of alone.
 *
 *   npm run bench:hostile-parse -w @trawl/e2e -- [--rounds 5] [--pages 600] [--hostile 3] [--siblings 40000] [--parse-timeout-ms 2000]
 *
 * Each round crawls the bystander's generated site alone, then again with `--hostile` one-page
 * crawls by the other user of pages of `--siblings` sibling elements under `b:nth-last-child(3)` (a
 * selector the API accepts; ~10 s of CPU a page), each failing TRAWL_PARSE_TIMEOUT. Prints each
 * round, the medians, their ratio and the load average, and one JSON line. A round in which the
 * bystander lost a page (on a machine so busy that one of its own parses ran past the limit) is
 * counted as `incomplete` and left out.
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { createTestSite } from '@trawl/demo-site';
import { apiClient, until, type Api } from '../src/api-client.ts';
import { startApiPipeline } from '../src/api-pipeline.ts';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    pages: { type: 'string', default: '600' },
    hostile: { type: 'string', default: '3' },
    siblings: { type: 'string', default: '40000' },
    'parse-timeout-ms': { type: 'string', default: '2000' },
  },
});
const rounds = Number(values.rounds);
const pages = Number(values.pages);
const hostilePages = Number(values.hostile);
const siblings = Number(values.siblings);
const parseTimeoutMs = Number(values['parse-timeout-ms']);
if (![rounds, pages, hostilePages, siblings, parseTimeoutMs].every((n) => Number.isInteger(n) && n >= 1)) throw new Error('every option must be a positive whole number');
const median = (xs: readonly number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const load = () => loadavg()[0]!.toFixed(1);

const site = await createTestSite({ pages, linksPerPage: 4, itemsPerPage: 1, traps: false });
const page = Buffer.from(`<!doctype html><html><body><div>${'<b>x</b>'.repeat(siblings)}</div></body></html>`);
const hostileSite = createServer((_req, res) => void res.writeHead(200, { 'content-type': 'text/html', 'content-length': String(page.length) }).end(page));
await new Promise<void>((resolve) => hostileSite.listen(0, '127.0.0.1', resolve));
const hostileOrigin = `http://127.0.0.1:${(hostileSite.address() as AddressInfo).port}`;

const allow = [site.port, (hostileSite.address() as AddressInfo).port].map((port) => `127.0.0.1:${port}`).join(',');
const { pipeline, base, keys } = await startApiPipeline({ env: { TRAWL_PARSE_TIMEOUT_MS: String(parseTimeoutMs), TRAWL_FETCH_ALLOW: allow }, users: ['bystander', 'attacker'] });
try {
  const [bystander, attacker] = keys.map((key) => apiClient(base, key)) as [Api, Api];

  const crawl = async (api: Api, body: Record<string, unknown>) => {
    const started = performance.now();
    const submitted = await api('POST', '/crawl', body);
    if (submitted.status !== 200) throw new Error(JSON.stringify(submitted.body));
    const id = submitted.body.job_id as string;
    const status = await until(() => api('GET', `/jobs/${id}/status`), (r) => ['finished', 'failed', 'cancelled'].includes(r.body.status as string), 240_000, `job ${id} over`, pipeline, 50);
    return { id, ms: performance.now() - started, counters: status.body.counters as { pages_fetched: number; pages_failed: number } };
  };
  // A page the bystander loses (its parse past the limit on a machine too busy) ends its crawl early: counted, and the round not used.
  let incomplete = 0;
  let lastBystanderJob = '';
  /** Each round beside: when it started (epoch ms), the bystander's job and the hostile jobs. */
  const besideRounds: { at: number; bystander: string; hostile: string[] }[] = [];
  const bystanderCrawl = async () => {
    const run = await crawl(bystander, { start_urls: [site.home], depth: 10, max_pages: pages * 2, ignore_cache: true });
    lastBystanderJob = run.id;
    if (run.counters.pages_fetched === pages) return run.ms;
    incomplete++;
    console.log(`the bystander's crawl is not whole: ${JSON.stringify(run.counters)}`);
    return undefined;
  };
  for (const api of [bystander, attacker]) await until(() => api('GET', '/jobs'), (r) => r.status !== 401, 30_000, 'the new key known to the API', pipeline);
  const saved = await attacker('POST', '/websites', { id: 'slow-selector', name: 'slow selector', base_url: `${hostileOrigin}/`, item_root: 'b:nth-last-child(3)', item_fields: [{ name: 't', selector: '' }] });
  if (saved.status !== 201) throw new Error(JSON.stringify(saved.body));

  await bystanderCrawl(); // warms the worker's threads and connections
  const alone: number[] = [];
  const beside: number[] = [];
  for (let round = 1; round <= rounds; round++) {
    const solo = await bystanderCrawl();
    const at = Date.now();
    const [ms, ...attacks] = await Promise.all([bystanderCrawl(), ...Array.from({ length: hostilePages }, (_, i) => crawl(attacker, { spider: 'slow-selector', start_urls: [`${hostileOrigin}/page/${round}-${i}`], depth: 0 }))]);
    besideRounds.push({ at, bystander: lastBystanderJob, hostile: attacks.map((a) => a.id) });
    if (attacks.some((a) => a.counters.pages_failed !== 1)) console.log(`a hostile page did not fail: ${JSON.stringify(attacks.map((a) => a.counters))}`);
    if (solo === undefined || ms === undefined) continue;
    alone.push(solo);
    beside.push(ms);
    console.log(`round ${round}: alone ${(solo / 1000).toFixed(2)} s, beside ${(ms / 1000).toFixed(2)} s (${(ms / solo).toFixed(2)}×), load ${load()}`);
  }
  // Where the time goes: the bystander's pages done per 250 ms from the round's start, and when each hostile page failed (`X`).
  const events = await pipeline.events();
  for (const [i, r] of besideRounds.entries()) {
    const buckets: number[] = [];
    const failed = new Set<number>();
    for (const { event } of events) {
      const v = event.value as { job_id?: string; occurred_at?: Date };
      if (!v.occurred_at) continue;
      const bucket = Math.floor((v.occurred_at.getTime() - r.at) / 250);
      if (bucket < 0) continue;
      if (event.name === 'PageFetched' && v.job_id === r.bystander) buckets[bucket] = (buckets[bucket] ?? 0) + 1;
      if (event.name === 'PageFailed' && r.hostile.includes(v.job_id ?? '')) failed.add(bucket);
    }
    const line = Array.from({ length: Math.max(buckets.length, Math.max(0, ...failed) + 1) }, (_, b) => `${failed.has(b) ? 'X' : ''}${buckets[b] ?? 0}`).join(' ');
    console.log(`timeline ${i + 1} (pages per 250 ms, X: a hostile page failed): ${line}`);
  }
  if (alone.length === 0) throw new Error(`no round had both crawls whole (${incomplete} not whole): the machine is too busy for this limit; try a larger --parse-timeout-ms`);
  const result = { pages, hostilePages, siblings, parseTimeoutMs, rounds: alone.length, incomplete, aloneMs: Math.round(median(alone)), besideMs: Math.round(median(beside)), ratio: +(median(beside) / median(alone)).toFixed(2), load: +load() };
  console.log(`medians of ${alone.length} rounds: alone ${(result.aloneMs / 1000).toFixed(2)} s, beside ${(result.besideMs / 1000).toFixed(2)} s: ${result.ratio}× (load ${result.load})`);
  console.log(JSON.stringify(result));
} finally {
  await pipeline.stop();
  await site.close();
  hostileSite.close();
}
