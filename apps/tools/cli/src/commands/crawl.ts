/**
 * `trawl crawl <url> [--depth N] [--max-pages N] [--spider ID] [--sitemap MODE] [--fresh] [--follow | --detach]`:
 * submits a crawl through the API and follows it with a live progress bar and a summary. The job
 * id goes to stdout first (for scripts); the bar goes to stderr. With `--json`, stdout holds one
 * JSON document: the API's answer (detached) or the job's final status (followed).
 */
import type { Job } from '@trawl/client';
import type { ApiClient } from '../lib/api-client.ts';
import { CliError } from '../lib/cli-error.ts';
import { followJob, summary } from '../lib/follow-job.ts';
import { printable } from '../lib/format.ts';
import { openFeed, type FeedConnection } from '../lib/live-feed.ts';
import type { OptionsBody } from './crawl-options.ts';

export interface CrawlOptions {
  readonly depth: number;
  readonly maxPages?: number;
  readonly spider?: string;
  /** What a start URL that is a site's root does with its sitemaps; absent: the API's default (include). */
  readonly sitemap?: 'include' | 'only' | 'skip';
  /** ignore_cache: always a new job. */
  readonly fresh: boolean;
  readonly follow: boolean;
  /** The API's answer (detached) or the job's final status (followed) as JSON on stdout, instead of the id and summary. */
  readonly json?: boolean;
  /** Request, reach and link options (crawl-options.ts: the flags' body fields). */
  readonly options?: Partial<OptionsBody>;
}

export async function crawl(api: ApiClient, url: string, options: CrawlOptions): Promise<Job | undefined> {
  // The feed first, so the job's first events are not missed; without it, the status backstop works alone.
  let feed: FeedConnection | null = null;
  if (options.follow) {
    feed = await openFeed(api).catch((err: unknown) => {
      process.stderr.write(`(no live feed: ${(err as Error).message}; polling the status instead)\n`);
      return null;
    });
  }
  try {
    const answer = await api.ok(api.http.POST('/crawl', { body: { ...crawlBody(url, options), ...options.options, ...(options.fresh ? { ignore_cache: true } : {}), ...(options.sitemap ? { sitemap: options.sitemap } : {}) } }));
    // Without `schedule_at` or `interval` the API starts the crawl (200); 202 would be a schedule.
    if (answer.scheduled) throw new CliError(`the API scheduled the crawl (${answer.schedule_id}) instead of starting it`);
    if (options.json && !options.follow) process.stdout.write(JSON.stringify(answer, null, 2) + '\n');
    if (!options.json) process.stdout.write(`${printable(answer.job_id)}\n`);
    if (answer.cached) process.stderr.write(`(an identical crawl from ${printable(String(answer.cached_at))} — use --fresh for a new one)\n`);
    if (!options.follow) {
      process.stderr.write(`follow it with: npx trawl logs ${printable(answer.job_id)}\n`);
      return undefined;
    }
    const status = await followJob(api, answer.job_id, feed, { startUrls: [url], depth: options.depth, maxPages: options.maxPages ?? 1000 });
    process.stdout.write(options.json ? JSON.stringify(status, null, 2) + '\n' : summary(status) + '\n');
    return status;
  } finally {
    feed?.close();
  }
}

/** The body of `POST /crawl` for one start URL, as `crawl` and `schedules create` send it. */
export function crawlBody(url: string, options: { readonly depth: number; readonly maxPages?: number; readonly spider?: string }) {
  return {
    start_urls: [url],
    depth: options.depth,
    ...(options.maxPages === undefined ? {} : { max_pages: options.maxPages }),
    ...(options.spider === undefined ? {} : { spider: options.spider }),
  };
}

export function parseCount(name: string, raw: string | undefined, min: number, max: number): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw new CliError(`--${name} must be a whole number from ${min} to ${max}`, 2);
  return n;
}

/** `--sitemap`: one of the API's modes, refused like a bad count (exit 2) otherwise. */
export function parseSitemapMode(raw: string): 'include' | 'only' | 'skip' {
  if (raw === 'include' || raw === 'only' || raw === 'skip') return raw;
  throw new CliError(`--sitemap must be include, only or skip, not "${raw}"`, 2);
}
