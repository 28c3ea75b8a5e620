/**
 * One dispatcher tick: claim due schedules (FOR UPDATE SKIP LOCKED), produce TargetDue and
 * JobDispatched for each, then advance the schedules and commit.
 *
 * Order matters. Events are acknowledged by Kafka *before* the transaction that advances
 * `next_due` commits: a crash in between leaves the slot due, the next tick dispatches it again
 * with the same job and event ids, and the duplicates are absorbed downstream. The other order
 * (commit, then produce) could lose a slot for good.
 *
 * Before a slot runs, its schedule is checked where it fires (schedule-checks.ts): a target that is
 * gone cancels it; a website or target that is gone or now another user's, or a cadence below its
 * owner's minimum interval, pauses it with the reason in the schedule row and the log. Then the
 * owner's quotas (apps/libs/store quotas/): a slot that would pass the owner's active jobs or the day's
 * pages is skipped — the schedule moves on to its next slot and records why — and a job that fits
 * only partly gets what is left of the day as its `max_pages`. Started jobs go into the quota
 * ledger in the transaction that advances their schedules.
 *
 * A slot whose schedule's previous job is still going (pending, running or paused in the `jobs`
 * read model, or not projected there yet) follows the schedule's overlap policy: `skip` records the
 * slot as skipped (`OVERLAP: …`) and moves on to the next, `queue` leaves `next_due` where it is so
 * a later tick runs the latest slot once that job has ended, `allow` dispatches as usual.
 *
 * A schedule of a request with `dedupe` claims the owner's dedupe entry for its request (the API's
 * `crawl_dedupe`, as an immediate crawl does) once its slot would run: an unexpired entry of another
 * job answers the slot (skipped, `DEDUPED: …`), else the run becomes the entry identical crawls get
 * until the TTL. That costs a round trip per such slot; schedules without it pay nothing.
 *
 * A batch costs the same few round trips whatever its size: the claim, its targets, their
 * websites, its owners' quotas, one UPDATE per outcome; its events go out in the producer's shared
 * batches. (One query per schedule made 10,000 due targets take about 20 s; see test/load.test.ts.)
 */
import { counterIn, defaultMetrics, type EventProducer, type Logger, type MetricsRegistry } from '@trawl/streams';
import {
  cadenceOf,
  claimDedupe,
  claimDueSchedules,
  dedupeKey,
  dedupeTtlFromEnv,
  hasCrawlDedupe,
  decideInterval,
  decideJob,
  dueSlot,
  getTargets,
  getWebsites,
  inTransaction,
  lockUserQuotas,
  markDispatchedMany,
  markSkippedMany,
  pauseSchedules,
  quotaLimitsOf,
  quotasFromEnv,
  readUsage,
  recordJobs,
  runningJobs,
  sealedLayers,
  shortestGapMs,
  type DedupeInput,
  type DispatchedSlot,
  type LedgerEntry,
  type PausedSchedule,
  type Pool,
  type PoolClient,
  type QuotaLimits,
  type SkippedSlot,
  type CrawlRequest,
  type Website,
} from '@trawl/store';
import { credentialFingerprint, sealCredentials, secretBoxFromEnv, UnknownSecretError, userSecretLookup, type SecretBox } from '@trawl/store/secrets';
import type { RequestOptions } from '@trawl/schemas';
import { planDispatch } from './dispatch-plan.ts';
import { resolveSchedule } from './schedule-checks.ts';

export interface DispatcherOptions {
  readonly pool: Pool;
  readonly producer: EventProducer;
  readonly logger: Logger;
  /** Schedules claimed per transaction. */
  readonly batchSize?: number;
  /** The users' quota defaults (overridden per user in `user_quotas`); default from `TRAWL_QUOTA_*`. */
  readonly quotas?: QuotaLimits;
  /** Where `trawl_dispatcher_slots_total` is counted; default the process-wide registry (`/metrics`). */
  readonly metrics?: MetricsRegistry;
  /** How long a run of a schedule with `dedupe` answers identical crawls (and is answered by them); default `TRAWL_DEDUPE_TTL`, 0: off. */
  readonly dedupeTtlSeconds?: number;
  /** Seals the credentials of the jobs' specs; default from TRAWL_SECRETS_KEY (or the stack's env file), read when a job first needs it. */
  readonly secrets?: SecretBox;
}

export interface TickResult {
  readonly dispatched: number;
  readonly cancelled: number;
  readonly paused: number;
  readonly skipped: number;
  /** Slots held back (overlap `queue`) until the previous job ends. */
  readonly queued: number;
  /** Skipped slots by reason code (`OVERLAP`, `QUOTA_EXCEEDED`, `DEDUPED`). */
  readonly skips: Readonly<Record<string, number>>;
}

export class Dispatcher {
  private readonly batchSize: number;
  private readonly quotas: QuotaLimits;

  private readonly slots: ReturnType<typeof counterIn>;
  private readonly dedupeTtlSeconds: number;

  private secretBox: SecretBox | undefined;

  constructor(private readonly options: DispatcherOptions) {
    this.batchSize = options.batchSize ?? 500;
    this.quotas = options.quotas ?? quotasFromEnv();
    this.dedupeTtlSeconds = options.dedupeTtlSeconds ?? dedupeTtlFromEnv();
    this.slots = counterIn(
      options.metrics ?? defaultMetrics,
      'trawl_dispatcher_slots_total',
      'Due schedule slots by what became of them: dispatched, skipped (reason OVERLAP, QUOTA_EXCEEDED or DEDUPED), held (overlap queue, counted each tick), paused, cancelled.',
      ['outcome', 'reason'],
    );
  }

  private box(): SecretBox {
    return (this.secretBox ??= this.options.secrets ?? secretBoxFromEnv(process.env, 'the dispatcher'));
  }

  /** The job's option layers (the website's, the schedule's request) with every credential sealed and secrets resolved. */
  private async sealedOptions(tx: PoolClient, ownerId: string | null, website: Website | null | undefined, request: CrawlRequest | null): Promise<(RequestOptions | null)[]> {
    const layers = request ? [{ options: request, from: 'stored' as const }] : [];
    const box = this.box();
    return sealedLayers(website, layers, { box, lookup: ownerId ? userSecretLookup(tx, box, ownerId) : undefined });
  }

  /** The dedupe key of a schedule's request, over its credentials' clear values (sealing is randomised). */
  private async dedupeKeyOf(tx: PoolClient, ownerId: string, request: CrawlRequest): Promise<string> {
    const box = this.box();
    const { clear } = await sealCredentials(request, { box, lookup: userSecretLookup(tx, box, ownerId), from: 'stored' });
    return dedupeKey(clear as DedupeInput, credentialFingerprint(box));
  }

  /** Dispatches everything due at `now`, batch after batch. */
  async tick(now: Date = new Date()): Promise<TickResult> {
    const total = { dispatched: 0, cancelled: 0, paused: 0, skipped: 0, queued: 0 };
    const skips: Record<string, number> = {};
    // Schedules held back this tick stay due: they are not claimed again until the next tick.
    const held: string[] = [];
    for (;;) {
      const r = await inTransaction(this.options.pool, (tx) => this.dispatchBatch(tx, now, held));
      // Counted once the batch has committed: a rolled-back batch decided nothing.
      total.dispatched += r.dispatched;
      total.cancelled += r.cancelled;
      total.paused += r.paused;
      total.skipped += r.skipped;
      total.queued += r.queued;
      for (const [reason, n] of Object.entries(r.skips)) skips[reason] = (skips[reason] ?? 0) + n;
      this.count(r);
      if (r.claimed < this.batchSize) break;
    }
    if (total.dispatched + total.cancelled + total.paused + total.skipped + total.queued > 0) this.options.logger.info({ ...total, skips }, 'dispatcher tick');
    return { ...total, skips };
  }

  private count(r: TickResult): void {
    if (r.dispatched > 0) this.slots.inc({ outcome: 'dispatched', reason: '' }, r.dispatched);
    if (r.cancelled > 0) this.slots.inc({ outcome: 'cancelled', reason: '' }, r.cancelled);
    if (r.paused > 0) this.slots.inc({ outcome: 'paused', reason: '' }, r.paused);
    if (r.queued > 0) this.slots.inc({ outcome: 'held', reason: 'OVERLAP' }, r.queued);
    for (const [reason, n] of Object.entries(r.skips)) this.slots.inc({ outcome: 'skipped', reason }, n);
  }

  private async dispatchBatch(tx: PoolClient, now: Date, held: string[]): Promise<TickResult & { claimed: number }> {
    const { producer, logger } = this.options;
    const due = await claimDueSchedules(tx, now, this.batchSize, held);
    if (due.length === 0) return { claimed: 0, dispatched: 0, cancelled: 0, paused: 0, skipped: 0, queued: 0, skips: {} };
    // What the batch needs, in a few round trips rather than a few per schedule.
    const targets = await getTargets(tx, due.flatMap((s) => (s.target_id ? [s.target_id] : [])));
    const websiteIds = due.flatMap((s) => {
      if (!s.target_id) return s.request?.spider ? [s.request.spider] : [];
      const target = targets.get(s.target_id);
      return target?.active ? [target.website_id] : [];
    });
    const websites = await getWebsites(tx, websiteIds);
    const owners = [...new Set(due.flatMap((s) => (s.owner_id ? [s.owner_id] : [])))];
    const limits = await quotaLimitsOf(tx, owners, this.quotas);
    await lockUserQuotas(tx, owners);
    const usage = await readUsage(tx, owners, now);
    const going = await runningJobs(tx, due.flatMap((s) => (s.overlap !== 'allow' && s.last_job_id ? [s.last_job_id] : [])));
    const dedupes = this.dedupeTtlSeconds > 0 && due.some((s) => s.dedupe && s.request && s.owner_id) && (await hasCrawlDedupe(tx));

    const sends: Promise<unknown>[] = [];
    const marks: DispatchedSlot[] = [];
    const ledger: LedgerEntry[] = [];
    const cancelled: string[] = [];
    const paused: PausedSchedule[] = [];
    const skipped: SkippedSlot[] = [];
    let queued = 0;
    for (const schedule of due) {
      const log = { schedule_id: schedule.id, owner_id: schedule.owner_id, target_id: schedule.target_id, website_id: schedule.request?.spider ?? null };
      let resolution = resolveSchedule(schedule, targets, websites);
      const own = schedule.owner_id ? limits.get(schedule.owner_id)! : undefined;
      if (resolution.kind === 'run' && own) {
        const tooOften = decideInterval(own, shortestGapMs(cadenceOf(schedule)));
        if (tooOften) resolution = { kind: 'pause', reason: 'INTERVAL_TOO_SHORT', message: tooOften.message };
      }
      if (resolution.kind === 'cancel') {
        cancelled.push(schedule.id);
        logger.warn({ ...log, reason: resolution.reason }, `schedule cancelled: ${resolution.message}`);
        continue;
      }
      if (resolution.kind === 'pause') {
        paused.push({ id: schedule.id, reason: resolution.reason, message: resolution.message });
        logger.warn({ ...log, reason: resolution.reason }, `schedule paused: ${resolution.message}`);
        continue;
      }
      const { slot, next } = dueSlot(cadenceOf(schedule), schedule.next_due!, now);
      const previous = schedule.overlap !== 'allow' && schedule.last_job_id ? going.get(schedule.last_job_id) : undefined;
      if (previous) {
        const message = `the previous job ${schedule.last_job_id} is still ${previous}`;
        if (schedule.overlap === 'queue') {
          queued++;
          held.push(schedule.id);
          logger.debug({ ...log, slot }, `schedule slot held: ${message}`);
        } else {
          skipped.push({ id: schedule.id, slot, next, reason: `OVERLAP: ${message}` });
          logger.info({ ...log, reason: 'OVERLAP', slot }, `schedule slot skipped: ${message}`);
        }
        continue;
      }
      // Credentials sealed for the job's spec; a secret deleted since the schedule was saved pauses it.
      let options: (RequestOptions | null)[];
      try {
        options = await this.sealedOptions(tx, schedule.owner_id, resolution.website, schedule.request);
      } catch (err) {
        if (!(err instanceof UnknownSecretError)) throw err;
        paused.push({ id: schedule.id, reason: 'UNKNOWN_SECRET', message: err.message });
        logger.warn({ ...log, reason: 'UNKNOWN_SECRET' }, `schedule paused: ${err.message}`);
        continue;
      }
      let plan = planDispatch({ schedule, slot, target: resolution.target, website: resolution.website, options });
      if (schedule.owner_id && own) {
        const used = usage.get(schedule.owner_id)!;
        const decision = decideJob(own, used, plan.jobDispatched.body.spec.max_pages);
        if (!decision.ok) {
          skipped.push({ id: schedule.id, slot, next, reason: `QUOTA_EXCEEDED: ${decision.message}` });
          logger.warn({ ...log, reason: 'QUOTA_EXCEEDED', limit: decision.limit, slot }, `schedule slot skipped: ${decision.message}`);
          continue;
        }
        if (decision.capped) plan = planDispatch({ schedule, slot, target: resolution.target, website: resolution.website, pageCap: decision.maxPages, options });
        if (dedupes && schedule.dedupe && schedule.request) {
          // Claimed last, once the slot would run: a claim names a job that does start. Its own
          // earlier runs never answer a schedule's slot (its cadence asks for a new run); the slot's
          // own job id is its re-dispatch after a crash.
          const claim = await claimDedupe(tx, {
            userId: schedule.owner_id, key: await this.dedupeKeyOf(tx, schedule.owner_id, schedule.request), jobId: plan.jobId, ttlSeconds: this.dedupeTtlSeconds,
            replaces: schedule.last_job_id ? [schedule.last_job_id] : [],
          });
          if (!claim.claimed) {
            const message = `answered by job ${claim.job_id}, an identical crawl started ${claim.created_at.toISOString()}`;
            skipped.push({ id: schedule.id, slot, next, reason: `DEDUPED: ${message}` });
            logger.info({ ...log, reason: 'DEDUPED', slot, job_id: claim.job_id }, `schedule slot skipped: ${message}`);
            continue;
          }
        }
        usage.set(schedule.owner_id, { active_jobs: used.active_jobs + 1, pages_today: used.pages_today + decision.maxPages });
        ledger.push({ job_id: plan.jobId, user_id: schedule.owner_id, max_pages: decision.maxPages });
      }
      sends.push(
        producer.emit('TargetDue', plan.targetDue.body, { eventId: plan.targetDue.id, key: schedule.target_id ?? schedule.id }),
        producer.emit('JobDispatched', plan.jobDispatched.body, { eventId: plan.jobDispatched.id, causationId: plan.targetDue.id }),
      );
      marks.push({ id: schedule.id, slot, jobId: plan.jobId, next });
    }
    if (cancelled.length > 0) {
      await tx.query(`UPDATE schedules SET status = 'cancelled', updated_at = now() WHERE id = ANY($1::text[])`, [cancelled]);
    }
    await pauseSchedules(tx, paused);
    await markSkippedMany(tx, skipped);
    // Every event acknowledged before any schedule moves on (see the file comment).
    await Promise.all(sends);
    await markDispatchedMany(tx, marks);
    await recordJobs(tx, ledger);
    const skips: Record<string, number> = {};
    for (const x of skipped) {
      const code = x.reason.slice(0, x.reason.indexOf(':'));
      skips[code] = (skips[code] ?? 0) + 1;
    }
    return { claimed: due.length, dispatched: marks.length, cancelled: cancelled.length, paused: paused.length, skipped: skipped.length, queued, skips };
  }
}

