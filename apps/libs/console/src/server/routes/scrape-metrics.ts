/**
 * `GET /metrics/scrape`: the dashboard's data from ClickHouse, for the caller's jobs only. A
 * `job_id` must be one of the caller's (404 otherwise, like every other job route); the ClickHouse
 * queries are scoped to the caller's user whatever else is asked.
 */
import '../host-app.ts';
import type { FastifyPluginAsync } from 'fastify';
import { ClickHouseQueryError, ClickHouseUnavailableError } from '@trawl/clickhouse';
import type { DashboardQuery } from '../dashboards/dashboard-files.ts';
import { resolveRange, scrapeMetricsQuery, type ScrapeMetricsQuery } from '../dashboards/metrics-params.ts';
import { scrapeMetrics, type Panel } from '../dashboards/scrape-metrics.ts';
import { ConsoleError, unavailable } from '../errors.ts';
import { ownsJob } from '../ownership.ts';
import type { ConsoleServices } from '../console-services.ts';
import { errorResponses } from './error-responses.ts';

/** ClickHouse codes that mean "not there yet" or "too slow": the request may work later. */
const UNKNOWN_TABLE = 60;
const UNKNOWN_DATABASE = 81;
const TIMEOUT_EXCEEDED = 159;

export function clickhouseFailure(err: unknown): ConsoleError | undefined {
  if (err instanceof ClickHouseUnavailableError) return unavailable('ClickHouse', err);
  if (err instanceof ClickHouseQueryError && (err.chCode === UNKNOWN_TABLE || err.chCode === UNKNOWN_DATABASE)) {
    return new ConsoleError('DEPENDENCY_UNAVAILABLE', 'the analytics tables are not there yet (is projector-ch running?); retry later', undefined, { cause: err });
  }
  if (err instanceof ClickHouseQueryError && err.chCode === TIMEOUT_EXCEEDED) {
    return new ConsoleError('DEPENDENCY_UNAVAILABLE', 'the dashboard queries took too long: narrow the range or pick a host or job', undefined, { cause: err });
  }
  return undefined;
}

const numbers = { type: 'array', items: { type: ['number', 'null'] } } as const;
/** Counts per bucket: a bucket without rows is 0 (scrape-metrics.ts `spread`), never null. */
const counts = { type: 'array', items: { type: 'number' } } as const;

/** A breakdown row: the columns its SQL file selects (infra/clickhouse/dashboards/), numbers as numbers. */
function row(properties: Record<string, object>) {
  return { type: 'object', additionalProperties: true, required: Object.keys(properties), properties } as const;
}

/** The dashboard's answer (a shared schema: `ScrapeMetrics` in the OpenAPI document). */
export const scrapeMetricsResponse = {
  $id: 'ScrapeMetrics',
  type: 'object',
  required: ['range', 't', 'series', 'totals', 'status_codes', 'errors_by_kind', 'errors_by_host', 'top_hosts', 'hosts', 'panels', 'timings_ms'],
  properties: {
    range: {
      type: 'object',
      required: ['from', 'to', 'step', 'host', 'job_id'],
      properties: {
        from: { type: 'integer' },
        to: { type: 'integer' },
        step: { type: 'integer' },
        host: { type: ['string', 'null'] },
        job_id: { type: ['string', 'null'] },
      },
    },
    t: { type: 'array', items: { type: 'integer' }, description: 'bucket starts, Unix seconds' },
    series: {
      type: 'object',
      required: ['pages', 'failed', 'bytes', 'retries', 'items', 'p50', 'p95', 'p99', 'status'],
      properties: {
        pages: counts,
        failed: { ...counts, description: 'fetches dead-lettered (PageFailed)' },
        bytes: counts,
        retries: counts,
        items: counts,
        p50: numbers,
        p95: numbers,
        p99: numbers,
        status: { type: 'object', additionalProperties: counts, description: 'status class → pages per bucket' },
      },
    },
    totals: { type: 'object', additionalProperties: { type: ['number', 'null'] } },
    status_codes: { type: 'array', items: row({ code: { type: 'number' }, pages: { type: 'number' } }) },
    errors_by_kind: {
      type: 'array',
      items: row({ kind: { type: 'string' }, errors: { type: 'number' }, hosts: { type: 'number' }, jobs: { type: 'number' }, last_seen: { type: 'number', description: 'Unix seconds' } }),
    },
    errors_by_host: {
      type: 'array',
      items: row({ host_name: { type: 'string' }, errors: { type: 'number' }, dead_lettered: { type: 'number' }, fetches: { type: 'number' }, error_rate: { type: 'number' }, top_kind: { type: 'string' } }),
    },
    top_hosts: {
      type: 'array',
      items: row({ host_name: { type: 'string' }, pages: { type: 'number' }, failed: { type: 'number' }, bytes_sum: { type: 'number' }, p95_ms: { type: ['number', 'null'] }, retries: { type: 'number' } }),
    },
    hosts: { type: 'array', items: { type: 'string' } },
    panels: { type: 'array', items: { type: 'string' }, description: 'the panels computed' },
    timings_ms: { type: 'object', additionalProperties: { type: 'number' } },
  },
} as const;

export interface ScrapeMetricsRouteOptions {
  readonly services: ConsoleServices;
  readonly queries: () => ReadonlyMap<string, DashboardQuery>;
}

const scrapeMetricsRoutes: FastifyPluginAsync<ScrapeMetricsRouteOptions> = async (fastify, { services, queries }) => {
  fastify.get<{ Querystring: ScrapeMetricsQuery }>(
    '/metrics/scrape',
    {
      schema: {
        tags: ['console'],
        summary: "Scrape metrics of the caller's jobs from ClickHouse: series per time bucket and breakdowns",
        querystring: scrapeMetricsQuery,
        response: { 200: { $ref: 'ScrapeMetrics#' }, ...errorResponses },
      },
    },
    async (request) => {
      const range = resolveRange(request.query);
      if (range.jobId && !(await ownsJob(fastify.db, request.userId, range.jobId))) {
        throw new ConsoleError('JOB_NOT_FOUND', `job ${range.jobId} not found`, 'job_id');
      }
      try {
        const panels = request.query.panels ? ([...new Set(request.query.panels.split(','))] as Panel[]) : undefined;
        return await scrapeMetrics(services.clickhouse(), queries(), range, request.userId, panels);
      } catch (err) {
        throw clickhouseFailure(err) ?? err;
      }
    },
  );
};

export default scrapeMetricsRoutes;
