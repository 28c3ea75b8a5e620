/**
 * What a re-extraction (CrawlSpec.reextract_of) reads of its source job, in projector-pg's read
 * models (READ-MODEL.md): the source job's fetched pages (`job_pages`, ok rows), which seed it in
 * place of start URLs, and for each request the body it was parsed from, which goes out on
 * FetchRequested.cached for the worker to read from the content store instead of the network.
 *
 * The body is the source page's own (`job_pages.content_hash`: kept when the job asked for formats
 * or stored pages for the HTTP cache); for a page that kept none, the user's HTTP cache entry of
 * the URL (`http_cache`: the latest stored body of that URL of any of the user's jobs, which may
 * be newer than the source's). A page with neither goes out without one, and the worker fails it
 * NOT_STORED: counted with the job's failed pages and listed with that code.
 *
 * Deterministic enough to decide again: the API starts a re-extraction only of a finished job
 * whose pages are all projected, and a finished job's page rows never change, so a batch decided
 * again after a crash reads the same seeds. A failing read fails the batch (it is retried): a
 * re-extraction without its seeds would end at once with nothing done.
 */
import { fetchId, type ReextractSeed } from '@trawl/crawl';
import type { CachedPage } from '@trawl/schemas';
import type { Pool } from '@trawl/store';

interface SourceRow {
  url: string;
  content_hash: string | null;
  final_url: string | null;
  status: number | null;
  content_type: string | null;
  etag: string | null;
  last_modified: string | null;
  fetched_at: Date | null;
}

export class ReextractSource {
  constructor(private readonly db: Pick<Pool, 'query'>) {}

  /** The source job's fetched pages with their depths, in URL order. */
  async seeds(sourceJobId: string): Promise<ReextractSeed[]> {
    const { rows } = await this.db.query<ReextractSeed>(`SELECT url, depth FROM job_pages WHERE job_id = $1 AND ok ORDER BY url COLLATE "C"`, [sourceJobId]);
    return rows;
  }

  /**
   * The stored page of each URL (by URL; absent: none stored): the source page's body, else the
   * user's HTTP cache entry. The source page is found by its primary key (its fetch id is the
   * source job's id and the URL's).
   */
  async bodies(sourceJobId: string, userId: string | null, urls: readonly string[]): Promise<Map<string, CachedPage>> {
    const out = new Map<string, CachedPage>();
    if (urls.length === 0) return out;
    const { rows } = await this.db.query<SourceRow>(
      `SELECT k.url,
              coalesce(p.content_hash, c.content_hash) AS content_hash,
              CASE WHEN p.content_hash IS NOT NULL THEN coalesce(p.final_url, k.url) ELSE c.final_url END AS final_url,
              CASE WHEN p.content_hash IS NOT NULL THEN p.status ELSE c.status END AS status,
              CASE WHEN p.content_hash IS NOT NULL THEN p.content_type ELSE c.content_type END AS content_type,
              CASE WHEN p.content_hash IS NOT NULL THEN p.etag ELSE c.etag END AS etag,
              CASE WHEN p.content_hash IS NOT NULL THEN p.last_modified ELSE c.last_modified END AS last_modified,
              CASE WHEN p.content_hash IS NOT NULL THEN p.fetched_at ELSE c.fetched_at END AS fetched_at
         FROM unnest($2::text[], $3::text[]) AS k(url, fetch_id)
         LEFT JOIN job_pages p ON p.job_id = $1 AND p.fetch_id = k.fetch_id AND p.ok
         LEFT JOIN http_cache c ON c.user_id = $4 AND c.url = k.url`,
      [sourceJobId, urls, urls.map((u) => fetchId(sourceJobId, u)), userId],
    );
    for (const r of rows) {
      if (r.content_hash === null || r.status === null || r.fetched_at === null) continue;
      out.set(r.url, {
        content_hash: r.content_hash,
        fetched_at: r.fetched_at,
        final_url: r.final_url ?? r.url,
        status: r.status,
        content_type: r.content_type,
        etag: r.etag,
        last_modified: r.last_modified,
      });
    }
    return out;
  }
}
