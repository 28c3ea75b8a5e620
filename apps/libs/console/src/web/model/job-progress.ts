/**
 * A running job's progress from what the console can see: the status it read once, then the live
 * feed. No event says how many pages a crawl will have, so the total is an estimate — the distinct
 * URLs discovered so far (start URLs, plus the links of pages above the depth limit, capped by
 * max_pages) — and the bar stays below 100% until JobCompleted says it is over. Pure: tested
 * without a browser.
 */

export interface ProgressSnapshot {
  readonly status: string;
  readonly fetched: number;
  readonly failed: number;
  readonly items: number;
  readonly bytes: number;
  /** Estimated pages in all; equals done when the job is over. */
  readonly total: number;
  /** 0–100. */
  readonly percent: number;
  /** Whether the total is still a guess. */
  readonly estimated: boolean;
  /** Feed events applied (not counting duplicates). */
  readonly liveEvents: number;
}

export interface CrawlLimits {
  readonly maxDepth?: number;
  readonly maxPages?: number;
}

const TERMINAL = new Set(['finished', 'failed', 'cancelled']);

export class JobProgress {
  private status = 'pending';
  private baseline = { fetched: 0, failed: 0, items: 0, bytes: 0 };
  private readonly fetchedIds = new Set<string>();
  private readonly failedIds = new Set<string>();
  private readonly discovered = new Set<string>();
  private liveItems = 0;
  private liveBytes = 0;
  private liveEvents = 0;
  private final: { fetched: number; failed: number; items: number } | undefined;

  constructor(private limits: CrawlLimits = {}) {}

  setLimits(limits: CrawlLimits): void {
    this.limits = { ...this.limits, ...limits };
  }

  /** The status endpoint's view: the baseline the live events add to. Counters never go back. */
  applyStatus(s: { status: string; start_urls: readonly string[]; counters: { pages_fetched: number; pages_failed: number; items_extracted: number; bytes: number } }): void {
    if (!TERMINAL.has(this.status)) this.status = s.status;
    for (const u of s.start_urls) this.discovered.add(u);
    this.baseline = {
      fetched: Math.max(this.baseline.fetched, s.counters.pages_fetched - this.fetchedIds.size),
      failed: Math.max(this.baseline.failed, s.counters.pages_failed - this.failedIds.size),
      items: Math.max(this.baseline.items, s.counters.items_extracted - this.liveItems),
      bytes: Math.max(this.baseline.bytes, s.counters.bytes - this.liveBytes),
    };
    if (TERMINAL.has(s.status)) this.final ??= { fetched: s.counters.pages_fetched, failed: s.counters.pages_failed, items: s.counters.items_extracted };
  }

  /** One feed event; returns whether it changed anything (duplicates do not). */
  applyEvent(name: string, data: Record<string, unknown>): boolean {
    switch (name) {
      case 'JobDispatched': {
        const spec = data.spec as { max_depth?: number; max_pages?: number } | undefined;
        this.setLimits({ ...(spec?.max_depth !== undefined ? { maxDepth: spec.max_depth } : {}), ...(spec?.max_pages !== undefined ? { maxPages: spec.max_pages } : {}) });
        for (const u of (data.start_urls as string[] | undefined) ?? []) this.discovered.add(u);
        if (this.status === 'pending') this.status = 'running';
        break;
      }
      case 'PageFetched': {
        const id = String(data.fetch_id);
        if (this.fetchedIds.has(id)) return false;
        this.fetchedIds.add(id);
        this.discovered.add(String(data.url));
        this.liveItems += Number(data.item_count ?? 0);
        this.liveBytes += Number(data.bytes ?? 0);
        const depth = Number(data.depth ?? 0);
        // Links of a page at the depth limit are never followed: they do not add to the total.
        if (this.limits.maxDepth === undefined || depth < this.limits.maxDepth) {
          for (const link of (data.links as string[] | undefined) ?? []) this.discovered.add(link);
        }
        if (typeof data.next_page === 'string') this.discovered.add(data.next_page);
        if (this.status === 'pending') this.status = 'running';
        break;
      }
      case 'PageFailed': {
        const id = String(data.fetch_id);
        if (this.failedIds.has(id)) return false;
        this.failedIds.add(id);
        this.discovered.add(String(data.url));
        break;
      }
      case 'JobCompleted':
        this.status = data.outcome === 'cancelled' ? 'cancelled' : 'finished';
        this.final = { fetched: Number(data.pages_fetched), failed: Number(data.pages_failed), items: Number(data.items_extracted) };
        break;
      case 'JobFailed':
        this.status = 'failed';
        this.final = { fetched: Number(data.pages_fetched), failed: Number(data.pages_failed), items: this.baseline.items + this.liveItems };
        break;
      case 'JobCancelled':
        // The frontier still has to drop the outstanding fetches; JobCompleted(cancelled) ends it.
        if (!TERMINAL.has(this.status)) this.status = 'cancelling';
        break;
      default:
        return false;
    }
    this.liveEvents++;
    return true;
  }

  snapshot(): ProgressSnapshot {
    const over = TERMINAL.has(this.status);
    const fetched = over && this.final ? this.final.fetched : this.baseline.fetched + this.fetchedIds.size;
    const failed = over && this.final ? this.final.failed : this.baseline.failed + this.failedIds.size;
    const items = over && this.final ? this.final.items : this.baseline.items + this.liveItems;
    const done = fetched + failed;
    if (over) return { status: this.status, fetched, failed, items, bytes: this.baseline.bytes + this.liveBytes, total: done, percent: 100, estimated: false, liveEvents: this.liveEvents };
    const cap = this.limits.maxPages ?? Number.POSITIVE_INFINITY;
    const total = Math.max(done, Math.min(cap, Math.max(this.discovered.size, done + (this.status === 'pending' ? 1 : 0))));
    // Never 100% before the end: the frontier may still hold fetches we cannot see.
    const percent = total === 0 ? 0 : Math.min(99, Math.floor((100 * done) / total));
    return { status: this.status, fetched, failed, items, bytes: this.baseline.bytes + this.liveBytes, total, percent, estimated: true, liveEvents: this.liveEvents };
  }
}
