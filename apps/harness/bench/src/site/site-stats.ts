/** What the site server counted since its last reset (`GET /__bench/stats`). */
export interface SiteStats {
  /** Every request but the control paths. */
  requests: number;
  /** 200s for content pages. */
  pages: number;
  robots: number;
  notFound: number;
  /** Injected transient 503s (`--fail-rate`). */
  failed: number;
  /** Body bytes sent. */
  bytes: number;
  byHost: Record<string, number>;
  /** Epoch ms of the first and the last content page served (null before any). */
  firstPageAt: number | null;
  lastPageAt: number | null;
  /** Content pages served per TIMELINE_BUCKET_MS since the first one: the crawl's pace over time. */
  timeline: number[];
}

export const TIMELINE_BUCKET_MS = 100;

export const emptySiteStats = (): SiteStats => ({ requests: 0, pages: 0, robots: 0, notFound: 0, failed: 0, bytes: 0, byHost: {}, firstPageAt: null, lastPageAt: null, timeline: [] });

/** Content pages a second between the first and the last page served: the crawl's pace once going. */
export function steadyPagesPerSecond(stats: SiteStats): number | null {
  if (stats.firstPageAt === null || stats.lastPageAt === null || stats.lastPageAt <= stats.firstPageAt) return null;
  return Math.round((stats.pages * 10_000) / (stats.lastPageAt - stats.firstPageAt)) / 10;
}
