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
 * owner's quotas (apps/store quotas/): a slot that would pass the owner's active jobs or the day's
 * pages is skipped — the schedule moves on to its next slot and records why — and a job that fits
 * only partly gets what is left of the day as its `max_pages`. Started jobs go into the quota
 * ledger in the transaction that advances their schedules.
 *
 * A batch costs the same few round trips whatever its size: the claim, its targets, their
 * websites, its owners' quotas, one UPDATE per outcome; its events go out in the producer's shared
 * batches. (One query per schedule made 10,000 due targets take about 20 s; see test/load.test.ts.)
 */
import type { Logger } from 'pino';
import type { EventProducer } from '@trawl/streams';
import {
  cadenceOf,
  claimDueSchedules,
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
  shortestGapMs,
  type DispatchedSlot,
  type LedgerEntry,
  type PausedSchedule,
  type Pool,
  type PoolClient,
  type QuotaLimits,
  type SkippedSlot,
} from '@trawl/store';
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
}

export interface TickResult {
  readonly dispatched: number;
  readonly cancelled: number;
  readonly paused: number;
  readonly skipped: number;
}

export class Dispatcher {
  private readonly batchSize: number;
  private readonly quotas: QuotaLimits;

  constructor(private readonly options: DispatcherOptions) {
    this.batchSize = options.batchSize ?? 500;
    this.quotas = options.quotas ?? quotasFromEnv();
  }

  /** Dispatches everything due at `now`, batch after batch. */
  async tick(now: Date = new Date()): Promise<TickResult> {
    const total = { dispatched: 0, cancelled: 0, paused: 0, skipped: 0 };
    for (;;) {
      const r = await inTransaction(this.options.pool, (tx) => this.dispatchBatch(tx, now));
      total.dispatched += r.dispatched;
      total.cancelled += r.cancelled;
      total.paused += r.paused;
      total.skipped += r.skipped;
      if (r.claimed < this.batchSize) break;
    }
    if (total.dispatched + total.cancelled + total.paused + total.skipped > 0) this.options.logger.info(total, 'dispatcher tick');
    return total;
  }

  private async dispatchBatch(tx: PoolClient, now: Date): Promise<TickResult & { claimed: number }> {
    const { producer, logger } = this.options;
    const due = await claimDueSchedules(tx, now, this.batchSize);
    if (due.length === 0) return { claimed: 0, dispatched: 0, cancelled: 0, paused: 0, skipped: 0 };
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

    const sends: Promise<unknown>[] = [];
    const marks: DispatchedSlot[] = [];
    const ledger: LedgerEntry[] = [];
    const cancelled: string[] = [];
    const paused: PausedSchedule[] = [];
    const skipped: SkippedSlot[] = [];
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
      let plan = planDispatch({ schedule, slot, target: resolution.target, website: resolution.website });
      if (schedule.owner_id && own) {
        const used = usage.get(schedule.owner_id)!;
        const decision = decideJob(own, used, plan.jobDispatched.body.spec.max_pages);
        if (!decision.ok) {
          skipped.push({ id: schedule.id, slot, next, reason: `QUOTA_EXCEEDED: ${decision.message}` });
          logger.warn({ ...log, reason: 'QUOTA_EXCEEDED', limit: decision.limit, slot }, `schedule slot skipped: ${decision.message}`);
          continue;
        }
        if (decision.capped) plan = planDispatch({ schedule, slot, target: resolution.target, website: resolution.website, pageCap: decision.maxPages });
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
    return { claimed: due.length, dispatched: marks.length, cancelled: cancelled.length, paused: paused.length, skipped: skipped.length };
  }
}
