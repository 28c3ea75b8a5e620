/**
 * The parameters of `GET /metrics/scrape`: what the route's JSON schema cannot say (ranges and
 * their relations) checked here, defaults filled, and the range aligned to whole buckets so that
 * every bucket of a chart covers the same span.
 *
 * Bounds keep each query cheap whatever is asked: at most 31 days, at most 1000 buckets, at most
 * 100 rows per breakdown.
 */
import { ConsoleError } from '../errors.ts';

/** Kept in step with PANELS in scrape-metrics.ts (a test checks). */
export const PANEL_NAMES = 'throughput|items|fetch_time|status_mix|status_codes|errors_by_kind|errors_by_host|top_hosts|totals|hosts';

/** Bucket widths, seconds. A fixed ladder: buckets line up across refreshes and with Grafana's. */
export const STEPS = [10, 30, 60, 300, 900, 3600, 10_800, 21_600, 86_400] as const;
export const MAX_RANGE_SECONDS = 31 * 86_400;
export const MAX_BUCKETS = 1000;
/** Buckets aimed at when the step is left to the server: enough for a smooth line. */
export const TARGET_BUCKETS = 240;
export const DEFAULT_RANGE_SECONDS = 3600;
export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;
/** 2000-01-01 .. 2100-01-01: anything outside is a client bug, not a time range. */
export const MIN_TIME = 946_684_800;
export const MAX_TIME = 4_102_444_800;

/** Lowercase hostnames (as projector-ch stores them), IPv4, or a bracketed IPv6 literal. */
export const HOST_PATTERN = '^(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?)*|\\[[0-9a-f:.]{2,45}\\])$';
export const UUID_PATTERN = '^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$';

export const scrapeMetricsQuery = {
  type: 'object',
  additionalProperties: false,
  properties: {
    from: { type: 'integer', minimum: MIN_TIME, maximum: MAX_TIME, description: 'range start, Unix seconds (default: `to` − 1 h)' },
    to: { type: 'integer', minimum: MIN_TIME, maximum: MAX_TIME, description: 'range end, Unix seconds (default: now)' },
    step: { type: 'integer', enum: [...STEPS], description: 'bucket width in seconds (default: chosen for ~240 buckets)' },
    host: { type: 'string', maxLength: 253, pattern: HOST_PATTERN, description: 'only this host' },
    job_id: { type: 'string', pattern: UUID_PATTERN, description: 'only this job (one of yours)' },
    limit: { type: 'integer', minimum: 1, maximum: MAX_LIMIT, default: DEFAULT_LIMIT, description: 'rows per breakdown table' },
    panels: { type: 'string', pattern: `^(${PANEL_NAMES})(,(${PANEL_NAMES}))*$`, description: `comma list of panels to compute (default all): ${PANEL_NAMES.split('|').join(', ')}` },
  },
} as const;

export interface ScrapeMetricsQuery {
  panels?: string;
  from?: number;
  to?: number;
  step?: number;
  host?: string;
  job_id?: string;
  limit?: number;
}

export interface MetricsRange {
  readonly from: number;
  readonly to: number;
  readonly step: number;
  readonly host: string;
  readonly jobId: string;
  readonly limit: number;
}

/** The smallest step of the ladder that keeps the range within `buckets` buckets. */
export function stepFor(rangeSeconds: number, buckets: number = TARGET_BUCKETS): number {
  return STEPS.find((s) => rangeSeconds / s <= buckets) ?? STEPS[STEPS.length - 1]!;
}

export function resolveRange(q: ScrapeMetricsQuery, nowSeconds: number = Math.floor(Date.now() / 1000)): MetricsRange {
  const to = q.to ?? nowSeconds;
  const from = q.from ?? to - DEFAULT_RANGE_SECONDS;
  if (from >= to) throw new ConsoleError('VALIDATION_FAILED', 'from must be before to', 'from');
  if (to - from > MAX_RANGE_SECONDS) {
    throw new ConsoleError('VALIDATION_FAILED', `the range may span at most ${MAX_RANGE_SECONDS / 86_400} days`, 'from');
  }
  const step = q.step ?? stepFor(to - from);
  // Whole buckets: from down, to up to a multiple of the step (Unix time, so buckets are UTC-aligned).
  const alignedFrom = Math.floor(from / step) * step;
  const alignedTo = Math.ceil(to / step) * step;
  const buckets = (alignedTo - alignedFrom) / step;
  if (buckets > MAX_BUCKETS) {
    throw new ConsoleError('VALIDATION_FAILED', `step ${step} s gives ${buckets} buckets over this range; at most ${MAX_BUCKETS}: choose a larger step`, 'step');
  }
  return { from: alignedFrom, to: alignedTo, step, host: q.host ?? '', jobId: q.job_id?.toLowerCase() ?? '', limit: q.limit ?? DEFAULT_LIMIT };
}
