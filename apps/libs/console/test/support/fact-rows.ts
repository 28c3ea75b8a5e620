/** Fact rows for tests, in the projector's TabSeparated layout (infra/clickhouse/sql/001-facts.sql). */
import { randomUUID } from 'node:crypto';

export interface PageFact {
  job_id: string;
  user_id?: string;
  host: string;
  status: number;
  bytes: number;
  fetch_ms: number;
  ok: 0 | 1;
  error_code?: string;
  attempts: number;
  items?: number;
  /** Unix seconds. */
  ts: number;
  event_id?: string;
}

let offset = 0;

export function pageFactsTsv(rows: readonly PageFact[]): string {
  return rows
    .map((r) =>
      [
        r.event_id ?? randomUUID(),
        r.job_id,
        randomUUID(),
        r.user_id ?? '',
        r.host,
        `https://${r.host}/p/${offset}`,
        r.status,
        r.bytes,
        r.fetch_ms,
        'http',
        1,
        r.ok,
        r.error_code ?? '',
        r.attempts,
        r.items ?? 0,
        r.ts,
        0,
        offset++,
      ].join('\t'),
    )
    .join('\n');
}

export function itemFactsTsv(rows: readonly { job_id: string; host: string; ts: number }[]): string {
  return rows.map((r) => [randomUUID(), r.job_id, randomUUID(), randomUUID(), r.host, `https://${r.host}/i`, r.ts, 0, offset++].join('\t')).join('\n');
}

export function jobEventsTsv(rows: readonly { job_id: string; user_id: string; ts: number }[]): string {
  return rows.map((r) => [randomUUID(), r.job_id, 'CrawlRequested', r.user_id, '', '', 0, 0, 0, r.ts, 0, offset++].join('\t')).join('\n');
}
