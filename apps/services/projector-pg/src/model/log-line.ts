/**
 * The human side of a job: one log line per job and page event, as `GET /jobs/:id/logs` shows
 * them, e.g. `fetched https://shop.example/p/1 200 (5.1 KB, 42 ms, 3 items)`. `data` keeps the
 * figures for clients that render their own.
 *
 * Items have no line of their own: the page's line counts them and `GET /jobs/:id/items` lists
 * them. A line per item made the log ten times the pages on a listing site (most of the job
 * log's rows and of projector-pg's Postgres work) while saying what the items endpoint says.
 */
import type { EventMap } from '@trawl/schemas';

export type LogLevel = 'info' | 'warn' | 'error';

/** The events of a job on the projected topics (TargetDue and FetchRequested are not on them). */
export type JobEventName =
  | 'CrawlRequested' | 'JobDispatched' | 'PageFetched' | 'PageFailed' | 'ItemExtracted' | 'JobCompleted' | 'JobFailed' | 'JobCancelled'
  | 'JobPaused' | 'JobResumed';

/** The events that get a log line: every job event but ItemExtracted. */
export type LoggedEventName = Exclude<JobEventName, 'ItemExtracted'>;

export function isLogged(name: JobEventName): name is LoggedEventName {
  return name !== 'ItemExtracted';
}

export interface LogLine {
  readonly level: LogLevel;
  readonly msg: string;
  readonly data: Readonly<Record<string, unknown>>;
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} B`;
  const units = ['KB', 'MB', 'GB', 'TB'];
  let v = n / 1024;
  let i = 0;
  while (v >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  return `${v.toFixed(1)} ${units[i]}`;
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const m = Math.floor(ms / 60_000);
  const s = Math.round((ms % 60_000) / 1000);
  return `${m} min ${s} s`;
}

const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

export function logLine<N extends LoggedEventName>(name: N, event: EventMap[N]): LogLine {
  switch (name) {
    case 'CrawlRequested': {
      const e = event as EventMap['CrawlRequested'];
      const max = e.max_pages === null ? '' : `, at most ${plural(e.max_pages, 'page')}`;
      return {
        level: 'info',
        msg: `crawl requested by ${e.user_id}: ${plural(e.start_urls.length, 'start URL')}, depth ${e.depth}${max}`,
        data: { user_id: e.user_id, start_urls: e.start_urls, depth: e.depth, max_pages: e.max_pages, spider: e.spider },
      };
    }
    case 'JobDispatched': {
      const e = event as EventMap['JobDispatched'];
      const site = e.spec.website_name ? ` (${e.spec.website_name})` : '';
      const mode = e.spec.requires_browser ? 'browser' : 'http';
      return {
        level: 'info',
        msg: `dispatched attempt ${e.attempt}: ${e.search_url}${site}, depth ${e.spec.max_depth}, at most ${plural(e.spec.max_pages, 'page')}, ${mode}`,
        data: { attempt: e.attempt, search_url: e.search_url, target_id: e.target_id, schedule_id: e.schedule_id, website_id: e.spec.website_id },
      };
    }
    case 'PageFetched': {
      const e = event as EventMap['PageFetched'];
      const extras = [formatBytes(e.bytes), `${e.fetch_ms} ms`, plural(e.item_count, 'item')];
      if (e.render_mode === 'browser') extras.push('browser');
      if (e.truncated) extras.push('truncated');
      if (e.attempt > 1) extras.push(`attempt ${e.attempt}`);
      // Content the job would have kept and did not (the user's storage quota): a warning with its code.
      const refused = e.content_refused ?? null;
      if (refused) extras.push(`content not kept: ${refused}`);
      // A duplicate by rel=canonical: its items are the canonical page's (the job's `duplicates`).
      const canonical = e.canonical_url ?? null;
      if (canonical) extras.push(`duplicate of ${canonical}`);
      // A near-duplicate by main-text simhash (the worker's marking): the job's `near_duplicates`, `?duplicate=true`.
      const near = e.near_duplicate_of ?? null;
      if (near) extras.push(`near-duplicate of ${near}`);
      // The adaptive throttle's new setting for the host, when the worker said one: the job's view reads the latest per host from here.
      const throttle = e.throttle ?? null;
      if (throttle) extras.push(`throttle on ${throttle.host}: ${throttle.delay_ms} ms apart, ${throttle.concurrency} in flight`);
      // What the worker had to tell the job besides the page (a proxy benched): after the page's own figures.
      const notes = e.notes ?? [];
      const said = notes.length > 0 ? `; ${notes.join('; ')}` : '';
      const redirect = e.final_url !== e.url ? ` -> ${e.final_url}` : '';
      return {
        level: e.status >= 400 || refused || notes.length > 0 ? 'warn' : 'info',
        msg: `fetched ${e.url}${redirect} ${e.status} (${extras.join(', ')})${said}`,
        data: {
          fetch_id: e.fetch_id, url: e.url, final_url: e.final_url, status: e.status, bytes: e.bytes, fetch_ms: e.fetch_ms,
          items: e.item_count, links: e.links.length, depth: e.depth, render_mode: e.render_mode,
          ...(refused ? { content_refused: refused } : {}),
          ...(canonical ? { canonical_url: canonical } : {}),
          ...(near ? { near_duplicate_of: near } : {}),
          ...(throttle ? { throttle: { host: throttle.host, delay_ms: throttle.delay_ms, concurrency: throttle.concurrency } } : {}),
          ...(notes.length > 0 ? { notes } : {}),
        },
      };
    }
    case 'PageFailed': {
      const e = event as EventMap['PageFailed'];
      const status = e.status === null ? '' : ` (HTTP ${e.status})`;
      return {
        level: 'error',
        msg: `failed ${e.url}${status} after ${plural(e.attempts, 'attempt')}: ${e.error_code} ${e.error_message}`,
        data: { fetch_id: e.fetch_id, url: e.url, status: e.status, error_code: e.error_code, attempts: e.attempts, depth: e.depth },
      };
    }
    case 'JobCompleted': {
      const e = event as EventMap['JobCompleted'];
      const took = formatDuration(e.occurred_at.getTime() - e.started_at.getTime());
      const failed = e.pages_failed > 0 ? `, ${e.pages_failed} failed` : '';
      return {
        level: e.outcome === 'finished' && e.pages_failed === 0 ? 'info' : 'warn',
        msg: `${e.outcome}: ${plural(e.pages_fetched, 'page')} fetched${failed}, ${plural(e.items_extracted, 'item')}, ${plural(e.urls_seen, 'URL')} seen in ${took}`,
        data: { outcome: e.outcome, pages_fetched: e.pages_fetched, pages_failed: e.pages_failed, items_extracted: e.items_extracted, urls_seen: e.urls_seen },
      };
    }
    case 'JobFailed': {
      const e = event as EventMap['JobFailed'];
      return {
        level: 'error',
        msg: `job failed: ${e.error_code} ${e.reason}`,
        data: { error_code: e.error_code, reason: e.reason, pages_fetched: e.pages_fetched, pages_failed: e.pages_failed },
      };
    }
    case 'JobCancelled': {
      const e = event as EventMap['JobCancelled'];
      const by = e.user_id ? ` by ${e.user_id}` : '';
      const why = e.reason ? `: ${e.reason}` : '';
      return { level: 'warn', msg: `cancel requested${by}${why}`, data: { user_id: e.user_id, reason: e.reason } };
    }
    case 'JobPaused': {
      const e = event as EventMap['JobPaused'];
      const by = e.user_id ? ` by ${e.user_id}` : '';
      return { level: 'info', msg: `paused${by}: no new fetches until resumed`, data: { user_id: e.user_id, reason: e.reason } };
    }
    case 'JobResumed': {
      const e = event as EventMap['JobResumed'];
      const by = e.user_id ? ` by ${e.user_id}` : '';
      return { level: 'info', msg: `resumed${by}`, data: { user_id: e.user_id } };
    }
  }
  throw new Error(`no log line for ${String(name)}`);
}
