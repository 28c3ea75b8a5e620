/**
 * `npm run bench:footprint -w @trawl/bench -- [--pages 5000] [--formats markdown]`
 *
 * What one crawled page leaves behind, measured on a real crawl (frontier, worker, both
 * projectors): the bytes and messages it writes to each Kafka topic (the payloads, and the broker's
 * log segments on disk), the rows and bytes of each Postgres and ClickHouse table, and the objects
 * in the content store. These sizes do not depend on the machine's load, and docs/scale.md derives
 * a deployment's disks and write rates from them. `--formats` keeps content formats, `--cache`
 * each page's body for the HTTP cache (both off by default, as for a crawl).
 *
 * Figures on stdout (per page, and for the whole crawl); bench-results/footprint.json.
 */
import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { ContentStore } from '@trawl/content';
import { endpoints, httpTarget, readTopics, trawlHome } from '@trawl/streams';
import { optionsOrExit } from './bench-options.ts';
import { TrawlContender } from './contenders/trawl-contender.ts';
import { progress, say, table } from './report/print-table.ts';
import { writeResults } from './report/write-results.ts';
import { startSite } from './site/site-process.ts';

const USAGE = `options (all optional):
  --pages N         pages of the site (default 5000)
  --formats LIST    content formats kept, comma list (default none)
  --cache           keep each body for the HTTP cache (store_in_cache: true)`;
const { values } = optionsOrExit('npm run bench:footprint', USAGE, () =>
  parseArgs({ options: { pages: { type: 'string', default: '5000' }, formats: { type: 'string', default: '' }, cache: { type: 'boolean' } } }),
);
const pages = Number(values.pages);
if (!Number.isInteger(pages) || pages < 10) throw new Error('--pages must be a whole number of at least 10');
const formats = values.formats.split(',').map((f) => f.trim()).filter(Boolean);

const perPage = (n: number, of = pages) => Math.round((n / of) * 10) / 10;

/** The broker's log segment files of each topic, summed (absent where the broker is not local). */
function kafkaDiskBytes(topics: readonly string[]): Map<string, number> | null {
  const dataDir = join(trawlHome(), 'kafka', 'data');
  if (!existsSync(dataDir)) return null;
  const out = new Map<string, number>();
  for (const dir of readdirSync(dataDir)) {
    const topic = topics.find((t) => dir.startsWith(`${t}-`) && /^\d+$/.test(dir.slice(t.length + 1)));
    if (!topic) continue;
    let bytes = 0;
    for (const f of readdirSync(join(dataDir, dir))) if (f.endsWith('.log')) bytes += statSync(join(dataDir, dir, f)).size;
    out.set(topic, (out.get(topic) ?? 0) + bytes);
  }
  return out;
}

async function clickhouseTables(database: string): Promise<{ table: string; rows: number; bytes: number }[]> {
  const ch = httpTarget(endpoints().clickhouseUrl);
  const sql = `SELECT table, sum(rows) AS rows, sum(bytes_on_disk) AS bytes FROM system.parts WHERE database = '${database}' AND active GROUP BY table ORDER BY table FORMAT JSONEachRow`;
  const res = await fetch(ch.url, { method: 'POST', body: sql, headers: ch.authorization ? { authorization: ch.authorization } : {} });
  if (!res.ok) throw new Error(`ClickHouse: ${res.status} ${await res.text()}`);
  return (await res.text()).split('\n').filter(Boolean).map((l) => {
    const r = JSON.parse(l) as { table: string; rows: string | number; bytes: string | number };
    return { table: r.table, rows: Number(r.rows), bytes: Number(r.bytes) };
  });
}

const site = await startSite({ pages, links: 4, items: 10, hosts: 1, render: 'html', logFile: join(trawlHome(), 'logs', 'bench', 'site-server.log') });
const contender = await TrawlContender.start(site, {
  workers: 1,
  concurrency: 32,
  eventPartitions: 3,
  fetchPartitions: 4,
  projectors: true,
  label: 'footprint',
  spec: { ...(formats.length > 0 ? { formats } : {}), ...(values.cache ? { store_in_cache: true } : {}) },
});
try {
  progress(`crawling ${pages} pages (formats: ${formats.join(',') || 'none'}${values.cache ? ', bodies kept for the HTTP cache' : ''})`);
  const run = await contender.run(pages);
  // Everything in the pipeline's topics and tables: its warm-up job's pages too.
  const { pipeline } = contender;
  const crawled = await (async () => {
    const db = new pg.Client({ connectionString: pipeline.db.url });
    await db.connect();
    try {
      const count = await db.query<{ n: string }>('SELECT count(*) AS n FROM job_pages');
      const tables = await db.query<{ table: string; bytes: string }>(
        `SELECT c.relname AS table, pg_total_relation_size(c.oid) AS bytes FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
          WHERE n.nspname = 'public' AND c.relkind = 'r' ORDER BY 2 DESC`,
      );
      const rows: { table: string; bytes: number; rows: number }[] = [];
      for (const t of tables.rows) rows.push({ table: t.table, bytes: Number(t.bytes), rows: Number((await db.query<{ n: string }>(`SELECT count(*) AS n FROM "${t.table}"`)).rows[0]!.n) });
      const hashes = await db.query<{ hash: string }>(
        `SELECT DISTINCT h AS hash FROM (SELECT content_hash AS h FROM job_pages WHERE content_hash IS NOT NULL
           UNION SELECT f->>'hash' FROM job_pages, jsonb_array_elements(formats) f WHERE f->>'hash' IS NOT NULL) x`,
      );
      return { pages: Number(count.rows[0]!.n), postgres: rows, hashes: hashes.rows.map((r) => r.hash) };
    } finally {
      await db.end();
    }
  })();
  progress(`reading the pipeline's topics (${crawled.pages} pages in all, the warm-up's included)`);
  const topicNames = pipeline.topics.specs.map((s) => s.name);
  const kafka = new Map<string, { messages: number; bytes: number }>();
  await readTopics(pipeline.kafka, topicNames, (m) => {
    const t = kafka.get(m.topic) ?? { messages: 0, bytes: 0 };
    t.messages++;
    t.bytes += (m.key?.length ?? 0) + (m.value?.length ?? 0) + Object.entries(m.headers).reduce((n, [k, v]) => n + k.length + (Buffer.isBuffer(v) ? v.length : String(v ?? '').length), 0);
    kafka.set(m.topic, t);
  });
  const disk = kafkaDiskBytes(topicNames);
  const clickhouse = await clickhouseTables(contender.clickhouseDatabase);
  const store = new ContentStore();
  const objectBytes = await Promise.all(crawled.hashes.map((h) => store.storedBytes(h)));
  const s3 = { objects: crawled.hashes.length, bytes: objectBytes.reduce<number>((a, b) => a + (b ?? 0), 0) };

  const n = crawled.pages;
  const short = (topic: string) => topic.slice(pipeline.prefix.length);
  const kafkaRows = [...kafka].sort((a, b) => b[1].bytes - a[1].bytes).map(([topic, t]) => ({ topic: short(topic), messages: t.messages, bytes: t.bytes, diskBytes: disk?.get(topic) ?? null }));
  const total = <T,>(rows: readonly T[], f: (r: T) => number | null) => rows.reduce((a, r) => a + (f(r) ?? 0), 0);
  say(`\nFootprint of ${n} pages (${run.pages} in the measured crawl, ${run.items} items; formats: ${formats.join(',') || 'none'})\n`);
  say(table(['Kafka topic', 'messages/page', 'payload B/page', 'on disk B/page'], [
    ...kafkaRows.map((r) => [r.topic, perPage(r.messages, n), perPage(r.bytes, n), r.diskBytes === null ? null : perPage(r.diskBytes, n)]),
    ['all topics', perPage(total(kafkaRows, (r) => r.messages), n), perPage(total(kafkaRows, (r) => r.bytes), n), disk ? perPage(total(kafkaRows, (r) => r.diskBytes), n) : null],
  ]));
  say('');
  say(table(['Postgres table', 'rows/page', 'B/page'], [
    ...crawled.postgres.filter((t) => t.bytes > 16_384 || t.rows > 0).map((t) => [t.table, perPage(t.rows, n), perPage(t.bytes, n)]),
    ['all tables', null, perPage(total(crawled.postgres, (t) => t.bytes), n)],
  ]));
  say('');
  say(table(['ClickHouse table', 'rows/page', 'B/page'], [
    ...clickhouse.map((t) => [t.table, perPage(t.rows, n), perPage(t.bytes, n)]),
    ['all tables', null, perPage(total(clickhouse, (t) => t.bytes), n)],
  ]));
  say(`\ncontent store: ${s3.objects} objects, ${perPage(s3.bytes, n)} B/page (gzip)`);
  const result = {
    bench: 'footprint',
    pages: n,
    formats,
    storeInCache: values.cache === true,
    kafka: kafkaRows,
    postgres: crawled.postgres,
    clickhouse,
    contentStore: s3,
    perPage: {
      kafkaMessages: perPage(total(kafkaRows, (r) => r.messages), n),
      kafkaPayloadBytes: perPage(total(kafkaRows, (r) => r.bytes), n),
      kafkaDiskBytes: disk ? perPage(total(kafkaRows, (r) => r.diskBytes), n) : null,
      postgresBytes: perPage(total(crawled.postgres, (t) => t.bytes), n),
      clickhouseBytes: perPage(total(clickhouse, (t) => t.bytes), n),
      contentStoreBytes: perPage(s3.bytes, n),
    },
    at: new Date().toISOString(),
  };
  say(`\n${JSON.stringify(result.perPage)}`);
  progress(`written ${writeResults('footprint.json', result)}`);
} finally {
  await contender.stop();
  await site.close();
}
