/**
 * Events → fact rows, as TabSeparated lines ready to insert. Pure: unit-tested without
 * ClickHouse. One table per projected topic, so a (partition, offset) names at most one row of
 * one table, which is what the projector's "already stored?" check relies on.
 */
import type { EventMap } from '@trawl/schemas';
import { EventCodec, type DecodedEvent, type EventFields } from '@trawl/streams';
import { tsvDateTime, tsvField } from '@trawl/clickhouse';

export type FactTable = 'page_fetches' | 'items' | 'job_events';

export const FACT_TABLES: readonly FactTable[] = ['job_events', 'page_fetches', 'items'];

export const FACT_COLUMNS: Readonly<Record<FactTable, readonly string[]>> = {
  page_fetches: ['event_id', 'job_id', 'fetch_id', 'user_id', 'host', 'url', 'status', 'bytes', 'fetch_ms', 'render_mode', 'depth', 'ok', 'error_code', 'attempts', 'items', 'ts', '_partition', '_offset'],
  items: ['event_id', 'job_id', 'fetch_id', 'item_key', 'host', 'url', 'ts', '_partition', '_offset'],
  job_events: ['event_id', 'job_id', 'event', 'user_id', 'outcome', 'error_code', 'pages_fetched', 'pages_failed', 'items_extracted', 'ts', '_partition', '_offset'],
};

/**
 * The fields the page and item facts are made of. The analytics decode nothing else of these
 * events (a page's links, an item's fields are skipped in the bytes): `factRow` reads only these.
 * Job events are few and decoded whole.
 */
export const FACT_FIELDS: EventFields = {
  PageFetched: ['event_id', 'occurred_at', 'job_id', 'fetch_id', 'url', 'status', 'bytes', 'fetch_ms', 'render_mode', 'depth', 'item_count', 'attempt'],
  PageFailed: ['event_id', 'occurred_at', 'job_id', 'fetch_id', 'url', 'status', 'render_mode', 'depth', 'error_code', 'attempts'],
  ItemExtracted: ['event_id', 'occurred_at', 'job_id', 'fetch_id', 'item_key', 'url'],
};

/** The codec the projector and its replay decode with: FACT_FIELDS only. */
export function analyticsCodec(registryUrl?: string): EventCodec {
  return new EventCodec(registryUrl, { fields: FACT_FIELDS });
}

/** An event with its place in the log. */
export interface PositionedEvent {
  readonly topic: string;
  readonly partition: number;
  readonly offset: bigint;
  readonly name: DecodedEvent['name'];
  readonly value: DecodedEvent['value'];
}

/** The lower-cased host of a URL, without port or credentials; '' when it has none. */
export function hostOf(url: string): string {
  const start = url.indexOf('://');
  if (start < 0) return '';
  let end = url.length;
  for (let i = start + 3; i < url.length; i++) {
    const c = url.charCodeAt(i);
    if (c === 47 /* / */ || c === 63 /* ? */ || c === 35 /* # */) {
      end = i;
      break;
    }
  }
  let authority = url.slice(start + 3, end);
  const at = authority.lastIndexOf('@');
  if (at >= 0) authority = authority.slice(at + 1);
  if (authority.startsWith('[')) return authority.slice(0, authority.indexOf(']') + 1).toLowerCase();
  const colon = authority.indexOf(':');
  return (colon >= 0 ? authority.slice(0, colon) : authority).toLowerCase();
}

/** Job id → user id, learnt from job events, to tag page facts with their user when known. */
export type UserLookup = (jobId: string) => string | undefined;

const t = tsvField;
const n = (v: number | null | undefined): string => String(v ?? 0);

/** The row an event makes, or undefined for events the analytics do not keep. */
export function factRow(e: PositionedEvent, userOf: UserLookup): { table: FactTable; line: string } | undefined {
  const pos = `${e.partition}\t${e.offset}`;
  switch (e.name) {
    case 'PageFetched': {
      const v = e.value as EventMap['PageFetched'];
      return {
        table: 'page_fetches',
        line: `${t(v.event_id)}\t${t(v.job_id)}\t${t(v.fetch_id)}\t${t(userOf(v.job_id) ?? '')}\t${t(hostOf(v.url))}\t${t(v.url)}\t${n(v.status)}\t${n(v.bytes)}\t${n(v.fetch_ms)}\t${v.render_mode}\t${n(v.depth)}\t1\t\t${n(v.attempt)}\t${n(v.item_count)}\t${tsvDateTime(v.occurred_at)}\t${pos}\n`,
      };
    }
    case 'PageFailed': {
      const v = e.value as EventMap['PageFailed'];
      return {
        table: 'page_fetches',
        line: `${t(v.event_id)}\t${t(v.job_id)}\t${t(v.fetch_id)}\t${t(userOf(v.job_id) ?? '')}\t${t(hostOf(v.url))}\t${t(v.url)}\t${n(v.status)}\t0\t0\t${v.render_mode}\t${n(v.depth)}\t0\t${t(v.error_code)}\t${n(v.attempts)}\t0\t${tsvDateTime(v.occurred_at)}\t${pos}\n`,
      };
    }
    case 'ItemExtracted': {
      const v = e.value as EventMap['ItemExtracted'];
      return {
        table: 'items',
        line: `${t(v.event_id)}\t${t(v.job_id)}\t${t(v.fetch_id)}\t${t(v.item_key)}\t${t(hostOf(v.url))}\t${t(v.url)}\t${tsvDateTime(v.occurred_at)}\t${pos}\n`,
      };
    }
    case 'CrawlRequested':
    case 'JobDispatched':
    case 'JobCompleted':
    case 'JobFailed':
    case 'JobCancelled':
    case 'JobPaused':
    case 'JobResumed': {
      const v = e.value as EventMap['JobCompleted'] & EventMap['JobFailed'] & { user_id?: string | null };
      const done = e.name === 'JobCompleted' || e.name === 'JobFailed';
      return {
        table: 'job_events',
        line: `${t(v.event_id)}\t${t(v.job_id)}\t${e.name}\t${t(v.user_id ?? '')}\t${t(e.name === 'JobCompleted' ? v.outcome : '')}\t${t(e.name === 'JobFailed' ? v.error_code : '')}\t${done ? n(v.pages_fetched) : '0'}\t${done ? n(v.pages_failed) : '0'}\t${e.name === 'JobCompleted' ? n(v.items_extracted) : '0'}\t${tsvDateTime(v.occurred_at)}\t${pos}\n`,
      };
    }
    default:
      return undefined;
  }
}

/** The user a job event names, if any (CrawlRequested, JobDispatched, JobCancelled). */
export function userOfEvent(e: Pick<PositionedEvent, 'name' | 'value'>): { jobId: string; userId: string } | undefined {
  if (e.name !== 'CrawlRequested' && e.name !== 'JobDispatched' && e.name !== 'JobCancelled') return undefined;
  const v = e.value as { job_id: string; user_id: string | null };
  return v.user_id ? { jobId: v.job_id, userId: v.user_id } : undefined;
}
