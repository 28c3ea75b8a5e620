/**
 * The soak's load: a schedule that fires every minute and ad-hoc crawls every 30–60 s, each job
 * on a generated site of its own (the chaos suite's test site, traps included), so that a site's
 * access log is one job's and nothing else's. The scheduled job's site changes every minute: half
 * a minute before each slot the schedule's target is pointed at a fresh site. Which job crawled
 * which site is read back from the log (JobDispatched's start URL), never from this module's
 * bookkeeping: the checker stays independent of the driver.
 */
import { createTestSite, type TestSite } from '@trawl/demo-site';
import { CONFIG_MIGRATIONS, crawlSpec, createSchedule, migrate, setScheduleStatus, upsertTarget, upsertWebsite } from '@trawl/store';
import { SchemaRegistryError } from '@trawl/streams';
import type { Pipeline } from '../../src/index.ts';
import { DEPTH, dispatchJob, retrying, SITE_OPTIONS } from '../chaos/support.ts';

/** The chaos site, with a slow page past the soak's longer fetch timeout (a loaded machine answers late). */
export const SOAK_SITE = { ...SITE_OPTIONS, slowMs: 12_000 } as const;
export const SOAK_FETCH_ENV = { TRAWL_FETCH_RETRY_DELAYS_MS: '300,600,900', TRAWL_FETCH_TIMEOUT_MS: '5000' } as const;

const OWNER = 'soak';
const SCHEDULE = 'soak-every-minute';
const TARGET = 'soak-target';
const WEBSITE = 'soak-site';
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** What the checker needs of a site: what a crawl of it must do, and what it served. */
export type SiteView = Pick<TestSite, 'expected' | 'accessLog'>;

export class Load {
  /** Every site made, by origin: the site itself until retired, then its expectations and access log only. */
  readonly sites = new Map<string, SiteView>();
  /** Sites still serving, by origin. */
  readonly live = new Map<string, TestSite>();
  adhocDispatched = 0;
  adhocFailed = 0;
  targetMoves = 0;
  private stopped = false;
  private loops: Promise<void>[] = [];

  constructor(
    private readonly p: Pipeline,
    private readonly random: () => number,
    private readonly log: (line: string) => void,
  ) {}

  private async site(): Promise<TestSite> {
    const site = await createTestSite(SOAK_SITE);
    this.sites.set(site.origin, site);
    this.live.set(site.origin, site);
    return site;
  }

  /**
   * Closes a site whose job has been checked, keeping only what a later check may read: a site
   * holds its 20 MB trap page once asked for it, and an hour of jobs would hold gigabytes.
   */
  async retire(origin: string): Promise<void> {
    const site = this.live.get(origin);
    if (!site) return;
    this.live.delete(origin);
    const expected = site.expected(DEPTH);
    this.sites.set(origin, { expected: () => expected, accessLog: site.accessLog });
    await site.close().catch(() => undefined);
  }

  /** The schedule (cron every minute at second 0, overlap skip) on its target, pointed at a first site. */
  async start(): Promise<void> {
    await migrate(this.p.db.pool, 'config', CONFIG_MIGRATIONS);
    await this.pointTarget(await this.site());
    await createSchedule(this.p.db.pool, { id: SCHEDULE, owner_id: OWNER, target_id: TARGET, cadence: { cron: '0 * * * * *' }, overlap: 'skip' });
    this.loops.push(this.scheduleLoop(), this.adhocLoop());
  }

  private async pointTarget(site: TestSite): Promise<void> {
    const pool = this.p.db.pool;
    await upsertWebsite(pool, {
      ...crawlSpec(null),
      ...site.spec,
      id: WEBSITE, owner_id: OWNER, name: 'Soak site', base_url: site.origin,
      next_link_selector: null, page_param: null, host_concurrency: 4, host_delay_ms: 0, max_depth: DEPTH, max_pages: 10_000,
    });
    await upsertTarget(pool, { id: TARGET, owner_id: OWNER, website_id: WEBSITE, name: null, url_template: site.home, keywords: [], location: null, active: true });
  }

  /** Half a minute before each slot, a fresh site behind the target (Postgres may be restarting: retried). */
  private async scheduleLoop(): Promise<void> {
    while (!this.stopped) {
      const toHalf = (90_000 - (Date.now() % 60_000)) % 60_000 || 60_000;
      const until = Date.now() + toHalf;
      while (!this.stopped && Date.now() < until) await sleep(Math.min(1_000, until - Date.now()));
      if (this.stopped) break;
      const site = await this.site();
      try {
        await retrying(() => this.pointTarget(site), 60_000);
        this.targetMoves++;
      } catch (err) {
        this.log(`load: could not point the schedule's target at a new site: ${(err as Error).message}`);
      }
    }
  }

  private async adhocLoop(): Promise<void> {
    while (!this.stopped) {
      const until = Date.now() + 30_000 + Math.round(this.random() * 30_000);
      while (!this.stopped && Date.now() < until) await sleep(Math.min(1_000, until - Date.now()));
      if (this.stopped) break;
      const site = await this.site();
      // A write that failed is not retried (with a new job id it could put two jobs on one site;
      // the idempotent producer already retries the write itself): the site is left without a job.
      // An event the registry could not register was never written: that one is tried again
      // while the registry restarts.
      for (const deadline = Date.now() + 60_000; ; await sleep(2_000)) {
        try {
          await dispatchJob(this.p, site, { userId: OWNER });
          this.adhocDispatched++;
          break;
        } catch (err) {
          // Thrown by the codec before anything is sent; retriable when the registry did not answer.
          const unregistered = err instanceof SchemaRegistryError && err.retriable;
          if (unregistered && Date.now() < deadline && !this.stopped) continue;
          this.adhocFailed++;
          this.log(`load: an ad-hoc dispatch failed (${(err as Error).message}); its site is left without a job`);
          break;
        }
      }
    }
  }

  /** Stops dispatching: the schedule is paused so that no slot starts a job during the drain. */
  async stop(): Promise<void> {
    this.stopped = true;
    await Promise.all(this.loops);
    await retrying(() => setScheduleStatus(this.p.db.pool, SCHEDULE, OWNER, 'paused'), 120_000);
  }

  async close(): Promise<void> {
    await Promise.all([...this.live.values()].map((s) => s.close().catch(() => undefined)));
  }
}
