/**
 * Whether one fetched page changed against its schedule's previous finished run: the decision
 * behind the PageChanged event (apps/services/webhooks produces it; the live feed and `page.changed`
 * webhooks get it from the log).
 *
 * The same rules as the listing (`jobChanges`): the baseline of baseline.ts, the page compared by
 * comparePage — so the pages this calls changed are the listing's `changed` pages. It decides only
 * once the baseline is settled (`wait` until then: the caller retries later), so a decision made
 * while projector-pg lags is not a different one. The baseline of a run is final once settled and
 * is remembered per run; a page then costs one lookup by primary key (the previous run's fetch id
 * of the same URL, derived as the frontier derives it).
 */
import { fetchId } from '@trawl/crawl';
import { baselineOf } from './baseline.ts';
import { comparePage } from './compare-pages.ts';
import { candidateRuns, pageOf, runOf } from './read-model.ts';
import type { Db } from './sql-cursor.ts';

/** What a PageFetched says of the page. */
export interface FetchedPage {
  readonly job_id: string;
  readonly fetch_id: string;
  readonly url: string;
  readonly content_hash: string | null;
}

export type PageChangeDecision =
  | {
      readonly kind: 'changed';
      readonly schedule_id: string;
      readonly previous_job_id: string;
      readonly previous_fetch_id: string;
      readonly previous_content_hash: string;
    }
  /** Not a change (new, unchanged, not comparable, not a scheduled run): nothing to say. */
  | { readonly kind: 'none'; readonly reason: string }
  /** Not decidable yet: the read models lag behind what the decision needs. */
  | { readonly kind: 'wait'; readonly reason: string };

type RunBaseline = { readonly schedule_id: string; readonly previous_job_id: string } | { readonly none: string };

const MISSING_TABLE = '42P01';

export class PageChangeDetector {
  private readonly baselines = new Map<string, RunBaseline>();

  constructor(
    private readonly db: Db,
    private readonly maxRemembered = 10_000,
  ) {}

  async decide(page: FetchedPage): Promise<PageChangeDecision> {
    if (page.content_hash === null) return { kind: 'none', reason: 'the run keeps no content of this page' };
    try {
      const baseline = await this.baseline(page.job_id);
      if ('kind' in baseline) return baseline;
      if ('none' in baseline) return { kind: 'none', reason: baseline.none };
      const before = await pageOf(this.db, baseline.previous_job_id, fetchId(baseline.previous_job_id, page.url));
      const kind = comparePage(before, { fetch_id: page.fetch_id, url: page.url, ok: true, content_hash: page.content_hash });
      if (kind !== 'changed') return { kind: 'none', reason: `the page is ${kind}` };
      return {
        kind: 'changed',
        schedule_id: baseline.schedule_id,
        previous_job_id: baseline.previous_job_id,
        previous_fetch_id: before!.fetch_id,
        previous_content_hash: before!.content_hash!,
      };
    } catch (err) {
      // No read models in this database (projector-pg never ran here): nothing can be compared.
      if ((err as { code?: string }).code === MISSING_TABLE) return { kind: 'none', reason: 'no read models' };
      throw err;
    }
  }

  /** The run's settled baseline (remembered), or why there is none (remembered), or a wait (not). */
  private async baseline(jobId: string): Promise<RunBaseline | { readonly kind: 'wait'; readonly reason: string }> {
    const known = this.baselines.get(jobId);
    if (known) return known;
    const run = await runOf(this.db, jobId);
    if (!run?.dispatched_at) return { kind: 'wait', reason: `the JobDispatched of ${jobId} is not in the read model yet` };
    if (run.schedule_id === null) return this.remember(jobId, { none: 'not a run of a schedule' });
    const chosen = baselineOf({ job_id: run.job_id, started_at: run.dispatched_at }, await candidateRuns(this.db, run.schedule_id, run.job_id, run.dispatched_at));
    if (!chosen.settled) return { kind: 'wait', reason: `the previous run is not settled: ${chosen.waiting_for.join(', ')}` };
    if (!chosen.previous) return this.remember(jobId, { none: 'the first finished run of its schedule' });
    return this.remember(jobId, { schedule_id: run.schedule_id, previous_job_id: chosen.previous.job_id });
  }

  private remember(jobId: string, baseline: RunBaseline): RunBaseline {
    if (this.baselines.size >= this.maxRemembered) this.baselines.clear();
    this.baselines.set(jobId, baseline);
    return baseline;
  }
}
