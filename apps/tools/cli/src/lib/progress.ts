/**
 * A crawl's progress as seen from the live feed, pure. The feed does not carry the frontier's
 * queue, so the total is an estimate: the start URLs plus every link kept by the crawl rules on
 * pages that may still be followed (depth < max depth), capped by the page budget. It only grows,
 * and the bar jumps to 100 % when the job completes.
 */
export interface FeedEventMessage {
  readonly type: 'event';
  readonly event: string;
  readonly job_id: string;
  readonly data: Record<string, unknown>;
}

export interface Progress {
  readonly pagesFetched: number;
  readonly pagesFailed: number;
  readonly items: number;
  readonly bytes: number;
  /** Estimated pages in the crawl (see the file comment). */
  readonly estimate: number;
  readonly done: boolean;
  /** finished | failed | cancelled once done. */
  readonly outcome: string | null;
  readonly error: string | null;
}

export class ProgressModel {
  private fetched = 0;
  private failed = 0;
  private items = 0;
  private bytes = 0;
  private readonly discovered = new Set<string>();
  private readonly seenEvents = new Set<string>();
  /** URLs the job's status says it has seen: the estimate's floor when the feed is not there. */
  private urlsSeen = 0;
  private maxDepth: number;
  private maxPages: number;
  private outcome: string | null = null;
  private error: string | null = null;

  constructor(startUrls: readonly string[], options: { maxDepth: number; maxPages: number }) {
    for (const u of startUrls) this.discovered.add(u);
    this.maxDepth = options.maxDepth;
    this.maxPages = options.maxPages;
  }

  apply(m: FeedEventMessage): void {
    const d = m.data;
    // The log is at-least-once: a fetch handed to a second worker by a rebalance before its offset
    // was committed is written again with the same event id, which the read models absorb and
    // the feed shows as it is. Counted once here too, so the bar agrees with the job's status.
    if (typeof d.event_id === 'string') {
      if (this.seenEvents.has(d.event_id)) return;
      this.seenEvents.add(d.event_id);
    }
    switch (m.event) {
      case 'JobDispatched': {
        const spec = d.spec as { max_depth?: number; max_pages?: number } | undefined;
        if (typeof spec?.max_depth === 'number') this.maxDepth = spec.max_depth;
        if (typeof spec?.max_pages === 'number') this.maxPages = spec.max_pages;
        break;
      }
      case 'PageFetched':
        this.fetched++;
        this.items += Number(d.item_count ?? 0);
        this.bytes += Number(d.bytes ?? 0);
        this.discovered.add(String(d.url));
        if (Number(d.depth ?? 0) < this.maxDepth) for (const link of (d.links as string[] | undefined) ?? []) this.discovered.add(link);
        if (typeof d.next_page === 'string') this.discovered.add(d.next_page);
        break;
      case 'PageFailed':
        this.failed++;
        this.discovered.add(String(d.url));
        break;
      case 'JobCompleted':
        this.outcome = String(d.outcome ?? 'finished');
        break;
      case 'JobFailed':
        this.outcome = 'failed';
        this.error = String(d.reason ?? d.error_code ?? 'failed');
        break;
      case 'JobCancelled':
        // The frontier still completes the job (outcome cancelled); keep following until then.
        break;
    }
  }

  /**
   * The figures of /jobs/:id/status, for a follower without the live feed (or one that missed
   * events): never below what the feed already counted.
   */
  counted(c: { readonly pages_fetched: number; readonly pages_failed: number; readonly items_extracted: number; readonly bytes: number; readonly urls_seen: number }): void {
    this.fetched = Math.max(this.fetched, c.pages_fetched);
    this.failed = Math.max(this.failed, c.pages_failed);
    this.items = Math.max(this.items, c.items_extracted);
    this.bytes = Math.max(this.bytes, c.bytes);
    this.urlsSeen = Math.max(this.urlsSeen, c.urls_seen);
  }

  /** Marks the end when learnt from /jobs/:id/status rather than from the feed. */
  finish(outcome: string, error: string | null = null): void {
    this.outcome = outcome;
    this.error = error;
  }

  get snapshot(): Progress {
    const seen = this.fetched + this.failed;
    return {
      pagesFetched: this.fetched,
      pagesFailed: this.failed,
      items: this.items,
      bytes: this.bytes,
      estimate: Math.max(seen, Math.min(this.maxPages, Math.max(this.discovered.size, this.urlsSeen))),
      done: this.outcome !== null,
      outcome: this.outcome,
      error: this.error,
    };
  }
}

/** One line: `[██████░░░░]  60%  12/20 pages · 1 failed · 34 items · 1.2 MiB`. */
export function renderBar(p: Progress, width = 24, format: (n: number) => string = String): string {
  const seen = p.pagesFetched + p.pagesFailed;
  const ratio = p.done ? 1 : p.estimate === 0 ? 0 : Math.min(1, seen / p.estimate);
  const full = Math.round(ratio * width);
  const bar = '█'.repeat(full) + '░'.repeat(width - full);
  const pct = `${Math.floor(ratio * 100)}%`.padStart(4);
  const failed = p.pagesFailed ? ` · ${p.pagesFailed} failed` : '';
  return `[${bar}] ${pct}  ${seen}/${p.done ? seen : p.estimate} pages${failed} · ${p.items} items · ${format(p.bytes)}`;
}
