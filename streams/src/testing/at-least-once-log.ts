/**
 * Generated event logs with everything at-least-once delivery puts in a real one, for the replay
 * equivalence properties of the read models: copies of an event re-emitted by a process that
 * crashed after producing (same deterministic event id, another offset, a later — or, from a
 * skewed clock, an earlier — occurred_at, even other figures: the page was fetched again), a fetch
 * that ended twice under two ids (failed, then fetched), job and page events in any order, jobs
 * that finish, fail, are cancelled or are still running, scheduled jobs without a request, a
 * second dispatch attempt, and (with `pauses`) pauses and resumes. Ids are derived as the producers derive them (worker-events.ts,
 * decide.ts), so a copy carries its job id (its key, hence its partition) and an item copy its key.
 *
 * Seeded: the same options give the same log, so a failing property names its seed.
 */
import type { EventName } from '@trawl/schemas';
import { sampleSpec } from '@trawl/schemas';
import { eventId, stableId } from '@trawl/base';
import type { EventBody } from '../producer/event-producer.ts';
import { prng, type SyntheticEvent } from './synthetic-crawl.ts';

export type LogTopic = 'jobs' | 'pages' | 'items';

/** One record as produced, in production order: the topic it goes to and the event (its key is the job id). */
export interface LogRecord {
  readonly topic: LogTopic;
  readonly event: SyntheticEvent;
  /** Whether an earlier record holds the same event id (a re-emitted copy). */
  readonly copy: boolean;
}

export interface AtLeastOnceLogOptions {
  readonly seed: number;
  /** Distinguishes runs that share topics. */
  readonly runId?: string;
  /** Jobs (default 1–4, from the seed). */
  readonly jobs?: number;
  /** Most fetches per job (default 12). */
  readonly maxPages?: number;
  /** Chance that an event is emitted again (default 0.25). */
  readonly copyRate?: number;
  /**
   * Pauses and resumes too (default false, which leaves the logs of every seed as they were): up
   * to two pauses a job, most followed by a resume, a pause sometimes asked twice.
   */
  readonly pauses?: boolean;
}

const TOPIC: Readonly<Record<string, LogTopic>> = {
  CrawlRequested: 'jobs', JobDispatched: 'jobs', JobCompleted: 'jobs', JobFailed: 'jobs', JobCancelled: 'jobs',
  JobPaused: 'jobs', JobResumed: 'jobs',
  PageFetched: 'pages', PageFailed: 'pages', ItemExtracted: 'items',
};

export function topicOfEvent(name: EventName): LogTopic {
  return TOPIC[name]!;
}

const ev = <N extends EventName>(name: N, body: EventBody<N>, id: string, at: Date): SyntheticEvent => ({ name, body, eventId: id, occurredAt: at }) as SyntheticEvent;

export function atLeastOnceLog(o: AtLeastOnceLogOptions): LogRecord[] {
  const rnd = prng(o.seed * 2654435761);
  const int = (lo: number, hi: number) => lo + Math.floor(rnd() * (hi - lo + 1));
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rnd() * xs.length)]!;
  const run = o.runId ?? `log-${o.seed}`;
  const jobs = o.jobs ?? int(1, 4);
  const copyRate = o.copyRate ?? 0.25;
  // Within a week whatever the seed: ClickHouse 18.16 keeps DateTime as Unix seconds in 32 bits.
  const base = Date.UTC(2026, 2, 1, 12) + (o.seed % 10_000) * 60_000;
  const originals: SyntheticEvent[][] = [];

  for (let j = 0; j < jobs; j++) {
    const job_id = stableId('at-least-once-job', run, j);
    const user = `user-${int(0, 2)}`;
    const host = pick(['shop.example', 'news.example', 'jobs.example']);
    const at = (ms: number) => new Date(base + j * 5_000 + ms);
    const out: SyntheticEvent[] = [];
    const pages = int(0, o.maxPages ?? 12);
    const scheduled = rnd() < 0.25;
    if (!scheduled) {
      out.push(ev('CrawlRequested', {
        job_id, user_id: user, spider: null, start_urls: [`https://${host}/`], depth: 2, max_pages: pages + 5,
        params: { q: `q${j}` }, dedupe_key: `dk-${run}-${j}`, ignore_cache: false, retry_of: null, sitemap: 'include',
      }, eventId('CrawlRequested', job_id), at(0)));
    }
    const attempts = rnd() < 0.2 ? 2 : 1;
    for (let a = 1; a <= attempts; a++) {
      out.push(ev('JobDispatched', {
        job_id, user_id: scheduled ? null : user, target_id: scheduled ? `target-${j}` : null, schedule_id: scheduled ? `schedule-${j}` : null,
        search_url: `https://${host}/search/${a}`, start_urls: [`https://${host}/`], keywords: ['k'], location: null,
        spec: { ...sampleSpec, website_id: `site-${host}`, website_name: host, max_pages: pages + 5 }, attempt: a,
        params: scheduled ? {} : { q: `q${j}` },
      }, stableId(job_id, 'JobDispatched', String(a)), at(100 * a)));
    }
    let fetched = 0;
    let failed = 0;
    let items = 0;
    for (let p = 0; p < pages; p++) {
      const fetch_id = stableId(job_id, 'fetch', p);
      // Half the URLs are shared by every job on the host: one user's jobs then meet in the HTTP cache.
      const url = rnd() < 0.5 ? `https://${host}/p/${p}` : `https://${host}/p/${j}/${p}`;
      const t = 1_000 + p * 500;
      const failFirst = rnd() < 0.15;
      const succeeds = !failFirst || rnd() < 0.5;
      if (failFirst) {
        failed += succeeds ? 0 : 1;
        out.push(ev('PageFailed', {
          job_id, fetch_id, url, depth: 1, status: rnd() < 0.5 ? 503 : null, error_code: p % 2 === 0 ? 'TRAWL_BLOCKED' : 'HTTP_5XX', error_message: 'unavailable', attempts: 4, render_mode: 'http',
        }, stableId(job_id, 'PageFailed', fetch_id), at(t)));
      }
      if (!succeeds) continue;
      fetched++;
      const count = int(0, 3);
      // What the HTTP cache reads: a stored body, validators, a reuse mark, and what keeps a page out of it.
      const stored = rnd() < 0.7;
      out.push(ev('PageFetched', {
        job_id, fetch_id, url, final_url: url, status: rnd() < 0.9 ? 200 : 203, content_type: 'text/html', bytes: int(500, 50_000), fetch_ms: int(5, 900),
        render_mode: rnd() < 0.9 ? 'http' : 'browser', depth: 1, links: [], links_dropped: 0, next_page: null, item_count: count,
        truncated: rnd() < 0.05, parsed: true, attempt: 1,
        content_hash: stored ? stableId('body', url, int(0, 2)).replaceAll('-', '').padEnd(64, '0') : null, formats: [],
        etag: rnd() < 0.6 ? `"v${int(1, 3)}"` : null,
        last_modified: rnd() < 0.5 ? new Date(base - int(1, 100) * 86_400_000).toUTCString() : null,
        from_cache: stored ? pick([null, null, 'not_modified', 'max_age'] as const) : null,
        sitemap_urls: [], sitemap_urls_dropped: 0, content_refused: null,
        // What the job's counters count from the log (by page index, no draw: a seed's other figures stay).
        canonical_url: p % 5 === 3 ? `https://${host}/p/0` : null, notes: p % 7 === 4 ? ['session retired and replaced: session 0 met a block (TRAWL_BLOCKED)'] : [], throttle: null, simhash: null, near_duplicate_of: null, downloads: [],
      }, stableId(job_id, 'PageFetched', fetch_id), at(t + 200)));
      for (let i = 0; i < count; i++) {
        items++;
        const item_key = stableId('item-key', fetch_id, i);
        out.push(ev('ItemExtracted', {
          job_id, fetch_id, item_key, url, fields: { title: `item ${j}/${p}/${i}`, price: `${int(1, 99)}.00` }, truncated_fields: [], errors: [],
        }, stableId(job_id, 'ItemExtracted', item_key), at(t + 210 + i)));
      }
    }
    const end = pick(['finished', 'finished', 'failed', 'cancelled', 'cancel-only', 'running'] as const);
    const endAt = at(1_000 + pages * 500 + 1_000);
    if (o.pauses) {
      // Pauses anywhere in the job's time (a second apart at least: the analytics keep seconds), in
      // any order with its other events once shuffled below.
      for (let n = int(0, 2), i = 0; i < n; i++) {
        const pausedAt = 500 + int(0, pages + 2) * 500 + i * 2_000;
        out.push(ev('JobPaused', { job_id, user_id: user, reason: 'paused by the user' }, stableId(job_id, 'JobPaused', i), at(pausedAt)));
        if (rnd() < 0.2) out.push(ev('JobPaused', { job_id, user_id: user, reason: 'asked again' }, stableId(job_id, 'JobPaused', i, 'again'), at(pausedAt + 1_000)));
        if (rnd() < 0.8) out.push(ev('JobResumed', { job_id, user_id: user }, stableId(job_id, 'JobResumed', i), at(pausedAt + 1_000 + int(1, 30) * 1_000)));
      }
    }
    if (end === 'failed') {
      out.push(ev('JobFailed', { job_id, error_code: 'ROBOTS_DISALLOWED', reason: 'disallowed', pages_fetched: fetched, pages_failed: failed }, stableId(job_id, 'JobFailed'), endAt));
    } else if (end === 'cancelled' || end === 'cancel-only') {
      out.push(ev('JobCancelled', { job_id, user_id: user, reason: 'stop' }, eventId('JobCancelled', job_id), new Date(endAt.getTime() - 300)));
      if (end === 'cancelled') {
        out.push(ev('JobCompleted', {
          job_id, outcome: 'cancelled', pages_fetched: fetched, pages_failed: failed, items_extracted: items, urls_seen: fetched + failed + 1, started_at: at(0),
        }, stableId(job_id, 'JobCompleted'), endAt));
      }
    } else if (end === 'finished') {
      out.push(ev('JobCompleted', {
        job_id, outcome: 'finished', pages_fetched: fetched, pages_failed: failed, items_extracted: items, urls_seen: fetched + failed, started_at: at(0),
      }, stableId(job_id, 'JobCompleted'), endAt));
    }
    originals.push(out);
  }

  // Each job's events in any order (out-of-order job and page events), its copies after their original.
  const perJob = originals.map((events) => {
    const order = shuffle(events, rnd);
    const records: LogRecord[] = order.map((event) => ({ topic: TOPIC[event.name]!, event, copy: false }));
    for (const event of events) {
      if (rnd() >= copyRate) continue;
      for (let c = int(1, 2); c > 0; c--) {
        const after = records.findIndex((r) => r.event === event);
        const at = int(after + 1, records.length);
        records.splice(at, 0, { topic: TOPIC[event.name]!, event: copyOf(event, rnd), copy: true });
      }
    }
    return records;
  });
  // The jobs interleaved at random, each in its own order.
  const out: LogRecord[] = [];
  const heads = perJob.map(() => 0);
  while (out.length < perJob.reduce((n, r) => n + r.length, 0)) {
    const open = perJob.map((r, i) => i).filter((i) => heads[i]! < perJob[i]!.length);
    const i = open[Math.floor(rnd() * open.length)]!;
    out.push(perJob[i]![heads[i]!++]!);
  }
  return out;
}

/** The event emitted again: same id, another time (mostly later; a skewed clock may put it earlier), other figures where a redo changes them. */
function copyOf(e: SyntheticEvent, rnd: () => number): SyntheticEvent {
  const shift = rnd() < 0.2 ? -Math.floor(rnd() * 5_000) : 1 + Math.floor(rnd() * 60_000);
  const occurredAt = new Date(e.occurredAt.getTime() + shift);
  const body = { ...e.body } as Record<string, unknown>;
  if (e.name === 'PageFetched') {
    body.bytes = (body.bytes as number) + 1 + Math.floor(rnd() * 1000);
    body.fetch_ms = (body.fetch_ms as number) + 1;
    body.attempt = (body.attempt as number) + 1;
    // Fetched again, the page may have changed: other validators (the first copy still stands).
    if (body.etag !== null) body.etag = `"v${1 + Math.floor(rnd() * 9)}"`;
  } else if (e.name === 'PageFailed') {
    body.attempts = (body.attempts as number) + 1;
  } else if (e.name === 'JobCompleted') {
    body.urls_seen = (body.urls_seen as number) + 1;
  }
  return { ...e, body, occurredAt } as SyntheticEvent;
}

function shuffle<T>(xs: readonly T[], rnd: () => number): T[] {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(rnd() * (i + 1));
    [out[i], out[j]] = [out[j]!, out[i]!];
  }
  return out;
}

/** A record where a broker keeps it: its key's partition of its topic, at the next offset there. */
export interface PlacedRecord extends LogRecord {
  readonly partition: number;
  readonly offset: bigint;
}

/** A stable partition for a job id (the tests' stand-in for the producer's key hash). */
export function partitionFor(jobId: string, partitions: number): number {
  let h = 0;
  for (let i = 0; i < jobId.length; i++) h = (Math.imul(h, 31) + jobId.charCodeAt(i)) >>> 0;
  return h % partitions;
}

/** The log as a broker would hold it, in production order: each record in its job's partition, at the next offset of that partition. */
export function placeInPartitions(records: readonly LogRecord[], partitions: number): PlacedRecord[] {
  const next = new Map<string, bigint>();
  return records.map((r) => {
    const partition = partitionFor((r.event.body as { job_id: string }).job_id, partitions);
    const key = `${r.topic}:${partition}`;
    const offset = next.get(key) ?? 0n;
    next.set(key, offset + 1n);
    return { ...r, partition, offset };
  });
}

/**
 * One order in which a consumer of all three topics may see the placed records: every partition in
 * offset order, the partitions interleaved at random (the seed picks which).
 */
export function consumerOrder(placed: readonly PlacedRecord[], seed: number): PlacedRecord[] {
  const rnd = prng(seed);
  const streams = new Map<string, PlacedRecord[]>();
  for (const r of placed) {
    const key = `${r.topic}:${r.partition}`;
    let s = streams.get(key);
    if (!s) streams.set(key, (s = []));
    s.push(r);
  }
  const lists = [...streams.values()];
  const heads = lists.map(() => 0);
  const out: PlacedRecord[] = [];
  while (out.length < placed.length) {
    const open = lists.map((_, i) => i).filter((i) => heads[i]! < lists[i]!.length);
    const i = open[Math.floor(rnd() * open.length)]!;
    out.push(lists[i]![heads[i]!++]!);
  }
  return out;
}
