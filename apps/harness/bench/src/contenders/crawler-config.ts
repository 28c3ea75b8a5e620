/** What the bench tells an in-process contender (Crawlee, the limit), and what it answers. */
export interface CrawlerConfig {
  readonly home: string;
  /** `host:port` of the site's hosts: the only links followed. */
  readonly hosts: readonly string[];
  readonly concurrency: number;
  readonly itemRoot: string;
  readonly itemFields: readonly { readonly name: string; readonly selector: string; readonly attribute: string | null }[];
}

export interface CrawlerResult {
  readonly phase: 'done';
  readonly pages: number;
  readonly failed: number;
  readonly items: number;
  /** Anchors looked at (before dedupe). */
  readonly links: number;
  /** From the first request to the last page handled. */
  readonly seconds: number;
  /** The process's own CPU over the crawl (process.cpuUsage), a cross-check of /proc. */
  readonly cpuSeconds: number;
}
