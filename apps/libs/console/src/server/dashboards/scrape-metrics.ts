/**
 * The answer of `GET /metrics/scrape`: every dashboard query of the range, run side by side, and
 * shaped for charts — series on one shared time axis with empty buckets filled (0 for counts, null
 * for quantiles, so a line breaks instead of dropping to zero where nothing was fetched).
 */
import type { ClickHouse } from '@trawl/clickhouse';
import type { DashboardQuery } from './dashboard-files.ts';
import type { MetricsRange } from './metrics-params.ts';
import { renderQuery } from './render-query.ts';

type Row = Record<string, unknown>;

/** The panels of the answer, one dashboard query each. */
export const PANELS = ['throughput', 'items', 'fetch_time', 'status_mix', 'status_codes', 'errors_by_kind', 'errors_by_host', 'top_hosts', 'totals', 'hosts'] as const;
export type Panel = (typeof PANELS)[number];

export interface ScrapeMetrics {
  readonly range: { from: number; to: number; step: number; host: string | null; job_id: string | null };
  /** Bucket starts, Unix seconds; every series below has one value per bucket. */
  readonly t: number[];
  readonly series: {
    readonly pages: number[];
    readonly failed: number[];
    readonly bytes: number[];
    readonly retries: number[];
    readonly items: number[];
    readonly p50: (number | null)[];
    readonly p95: (number | null)[];
    readonly p99: (number | null)[];
    /** Status class ('2xx', '3xx', '4xx', '5xx', 'none') → pages per bucket. */
    readonly status: Record<string, number[]>;
  };
  readonly totals: Record<string, number | null>;
  readonly status_codes: Row[];
  readonly errors_by_kind: Row[];
  readonly errors_by_host: Row[];
  readonly top_hosts: Row[];
  readonly hosts: string[];
  /** The panels this answer holds (others are left empty). */
  readonly panels: readonly Panel[];
  /** How long each query took in ClickHouse and back, ms. */
  readonly timings_ms: Record<string, number>;
}

/** Numbers from JSONEachRow: UInt64 arrives as a string, NaN/inf quantiles as null. */
export function num(v: unknown): number | null {
  if (v === null || v === undefined) return null;
  const n = typeof v === 'number' ? v : Number(v);
  return Number.isFinite(n) ? n : null;
}

function numericRow(row: Row): Row {
  const out: Row = {};
  for (const [k, v] of Object.entries(row)) out[k] = typeof v === 'string' && /^-?\d+(\.\d+)?$/.test(v) && k !== 'host_name' && k !== 'kind' ? Number(v) : v;
  return out;
}

export function bucketsOf(range: Pick<MetricsRange, 'from' | 'to' | 'step'>): number[] {
  const t: number[] = [];
  for (let x = range.from; x < range.to; x += range.step) t.push(x);
  return t;
}

/** One column of series rows spread over the buckets. */
export function spread(t: readonly number[], rows: readonly Row[], column: string, empty: 0 | null): (number | null)[] {
  const at = new Map<number, number | null>();
  for (const r of rows) at.set(Number(r.t), num(r[column]));
  return t.map((x) => (at.has(x) ? (at.get(x) ?? empty) : empty));
}

/**
 * Queries of one answer run one after the other. ClickHouse already spreads each query over every
 * core, so side by side they only compete: on 1.2 M facts (bench/dashboards.ts, 2 cores) the ten
 * queries of a heavy 7-day answer took ~4.4 s one by one and ~12.7 s three at a time, and each
 * query's elapsed time — which max_execution_time bounds — stretched with them.
 */
export const QUERY_CONCURRENCY = 1;

/** Runs `tasks` with at most `limit` in flight; results in order. */
async function limited<T>(tasks: readonly (() => Promise<T>)[], limit: number): Promise<T[]> {
  const out = new Array<T>(tasks.length);
  let next = 0;
  const worker = async () => {
    while (next < tasks.length) {
      const i = next++;
      out[i] = await tasks[i]!();
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, tasks.length) }, worker));
  return out;
}

/**
 * Runs the queries of `panels` (all by default). The console asks for the chart panels first and
 * the tables after, so charts are drawn as soon as their queries are done.
 */
export async function scrapeMetrics(
  ch: ClickHouse,
  queries: ReadonlyMap<string, DashboardQuery>,
  range: MetricsRange,
  user: string,
  panels: readonly Panel[] = PANELS,
): Promise<ScrapeMetrics> {
  const values = { ...range, user };
  const timings: Record<string, number> = {};
  const run = async (name: string): Promise<Row[]> => {
    const q = queries.get(name);
    if (!q) throw new Error(`dashboard query "${name}" is missing from infra/clickhouse/dashboards`);
    const started = performance.now();
    const rows = await ch.rows<Row>(renderQuery(q.template, values));
    timings[name] = Math.round((performance.now() - started) * 10) / 10;
    return rows;
  };
  const wanted = new Set(panels);
  const [throughput, items, fetchTime, statusMix, statusCodes, errorsByKind, errorsByHost, topHosts, totals, hosts] = await limited(
    PANELS.map((p) => () => (wanted.has(p) ? run(p) : Promise.resolve([] as Row[]))),
    QUERY_CONCURRENCY,
  );
  const t = bucketsOf(range);
  const counts = (rows: Row[], column: string) => spread(t, rows, column, 0) as number[];
  const status: Record<string, number[]> = {};
  for (const cls of [...new Set(statusMix!.map((r) => String(r.series)))].sort()) {
    status[cls] = counts(statusMix!.filter((r) => r.series === cls).map((r) => ({ t: r.t, value: r.value })), 'value');
  }
  const totalsRow = totals![0] ?? {};
  return {
    range: { from: range.from, to: range.to, step: range.step, host: range.host || null, job_id: range.jobId || null },
    t,
    series: {
      pages: counts(throughput!, 'pages'),
      failed: counts(throughput!, 'failed'),
      bytes: counts(throughput!, 'bytes_sum'),
      retries: counts(throughput!, 'retries'),
      items: counts(items!, 'items_extracted'),
      p50: spread(t, fetchTime!, 'p50', null),
      p95: spread(t, fetchTime!, 'p95', null),
      p99: spread(t, fetchTime!, 'p99', null),
      status,
    },
    totals: Object.fromEntries(Object.entries(totalsRow).map(([k, v]) => [k === 'bytes_sum' ? 'bytes' : k, num(v)])),
    status_codes: statusCodes!.map(numericRow),
    errors_by_kind: errorsByKind!.map(numericRow),
    errors_by_host: errorsByHost!.map(numericRow),
    top_hosts: topHosts!.map(numericRow),
    hosts: hosts!.map((r) => String(r.host_name)),
    panels: PANELS.filter((p) => wanted.has(p)),
    timings_ms: timings,
  };
}
