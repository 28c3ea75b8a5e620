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
}
