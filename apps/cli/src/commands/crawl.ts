/**
 * `trawl crawl <url> [--depth N] [--max-pages N] [--spider ID] [--fresh] [--follow | --detach]`:
 * submits a crawl through the API and follows it with a live progress bar and a summary. The job
 * id goes to stdout first (for scripts); the bar goes to stderr.
 */
import type { ApiClient } from '../lib/api-client.ts';
import { CliError } from '../lib/cli-error.ts';
import { followJob, summary, type JobStatus } from '../lib/follow-job.ts';
import { printable } from '../lib/format.ts';
import { openFeed, type FeedConnection } from '../lib/live-feed.ts';

export interface CrawlOptions {
  readonly depth: number;
  readonly maxPages?: number;
  readonly spider?: string;
  /** ignore_cache: always a new job. */
  readonly fresh: boolean;
  readonly follow: boolean;
}

interface CrawlAnswer {
  readonly job_id: string;
  readonly cached: boolean;
  readonly cached_at?: string;
}

export async function crawl(api: ApiClient, url: string, options: CrawlOptions): Promise<JobStatus | undefined> {
  // The feed first, so the job's first events are not missed; without it, the status backstop works alone.
  let feed: FeedConnection | null = null;
  if (options.follow) {
    feed = await openFeed(api).catch((err: unknown) => {
      process.stderr.write(`(no live feed: ${(err as Error).message}; polling the status instead)\n`);
      return null;
    });
  }
  try {
    const answer = await api.request<CrawlAnswer>('POST', '/crawl', {
      start_urls: [url],
      depth: options.depth,
      ...(options.maxPages === undefined ? {} : { max_pages: options.maxPages }),
      ...(options.spider === undefined ? {} : { spider: options.spider }),
      ...(options.fresh ? { ignore_cache: true } : {}),
    });
    process.stdout.write(`${printable(answer.job_id)}\n`);
    if (answer.cached) process.stderr.write(`(an identical crawl from ${printable(String(answer.cached_at))} — use --fresh for a new one)\n`);
    if (!options.follow) {
      process.stderr.write(`follow it with: npx trawl logs ${printable(answer.job_id)}\n`);
      return undefined;
    }
    const status = await followJob(api, answer.job_id, feed, { startUrls: [url], depth: options.depth, maxPages: options.maxPages ?? 1000 });
    process.stdout.write(summary(status) + '\n');
    return status;
  } finally {
    feed?.close();
  }
}

export function parseCount(name: string, raw: string | undefined, min: number, max: number): number | undefined {
  if (raw === undefined) return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw new CliError(`--${name} must be a whole number from ${min} to ${max}`, 2);
  return n;
}
