/**
 * One dispatcher tick: claim due schedules (FOR UPDATE SKIP LOCKED), produce TargetDue and
 * JobDispatched for each, then advance the schedules and commit.
 *
 * Order matters. Events are acknowledged by Kafka *before* the transaction that advances
 * `next_due` commits: a crash in between leaves the slot due, the next tick dispatches it again
 * with the same job and event ids, and the duplicates are absorbed downstream. The other order
 * (commit, then produce) could lose a slot for good.
 *
 * A batch costs the same few round trips whatever its size: the claim, its targets, their
 * websites, one UPDATE for all its schedules; its events go out in the producer's shared batches.
 * (One query per schedule made 10,000 due targets take about 20 s; see test/load.test.ts.)
 */
import type { Logger } from 'pino';
import type { EventProducer } from '@trawl/streams';
import {
  cadenceOf,
  claimDueSchedules,
  dueSlot,
  getTargets,
  getWebsites,
  inTransaction,
  markDispatchedMany,
  type DispatchedSlot,
  type Pool,
  type PoolClient,
  type Schedule,
  type Target,
  type Website,
} from '@trawl/store';
import { planDispatch } from './dispatch-plan.ts';

export interface DispatcherOptions {
  readonly pool: Pool;
  readonly producer: EventProducer;
  readonly logger: Logger;
  /** Schedules claimed per transaction. */
  readonly batchSize?: number;
}

export interface TickResult {
  readonly dispatched: number;
  readonly cancelled: number;
}

export class Dispatcher {
  private readonly batchSize: number;

  constructor(private readonly options: DispatcherOptions) {
    this.batchSize = options.batchSize ?? 500;
  }

  /** Dispatches everything due at `now`, batch after batch. */
  async tick(now: Date = new Date()): Promise<TickResult> {
    let dispatched = 0;
    let cancelled = 0;
    for (;;) {
      const r = await inTransaction(this.options.pool, (tx) => this.dispatchBatch(tx, now));
      dispatched += r.dispatched;
      cancelled += r.cancelled;
      if (r.claimed < this.batchSize) break;
    }
    if (dispatched + cancelled > 0) this.options.logger.info({ dispatched, cancelled }, 'dispatcher tick');
    return { dispatched, cancelled };
  }

  private async dispatchBatch(tx: PoolClient, now: Date): Promise<TickResult & { claimed: number }> {
    const { producer, logger } = this.options;
    const due = await claimDueSchedules(tx, now, this.batchSize);
    if (due.length === 0) return { claimed: 0, dispatched: 0, cancelled: 0 };
    // What the batch needs, in two round trips rather than two per schedule.
    const targets = await getTargets(tx, due.flatMap((s) => (s.target_id ? [s.target_id] : [])));
    const websiteIds = due.flatMap((s) => {
      if (!s.target_id) return s.request?.spider ? [s.request.spider] : [];
      const target = targets.get(s.target_id);
      return target?.active ? [target.website_id] : [];
    });
    const websites = await getWebsites(tx, websiteIds);
    const sends: Promise<unknown>[] = [];
    const marks: DispatchedSlot[] = [];
    const cancelled: string[] = [];
    for (const schedule of due) {
      const input = resolve(schedule, targets, websites);
      if (!input) {
        cancelled.push(schedule.id);
        logger.warn({ schedule_id: schedule.id, target_id: schedule.target_id }, 'schedule cancelled: its target is gone or inactive');
        continue;
      }
      const { slot, next } = dueSlot(cadenceOf(schedule), schedule.next_due!, now);
      const plan = planDispatch({ schedule, slot, ...input });
      sends.push(
        producer.emit('TargetDue', plan.targetDue.body, { eventId: plan.targetDue.id, key: schedule.target_id ?? schedule.id }),
        producer.emit('JobDispatched', plan.jobDispatched.body, { eventId: plan.jobDispatched.id, causationId: plan.targetDue.id }),
      );
      marks.push({ id: schedule.id, slot, jobId: plan.jobId, next });
    }
    if (cancelled.length > 0) {
      await tx.query(`UPDATE schedules SET status = 'cancelled', updated_at = now() WHERE id = ANY($1::text[])`, [cancelled]);
    }
    // Every event acknowledged before any schedule moves on (see the file comment).
    await Promise.all(sends);
    await markDispatchedMany(tx, marks);
    return { claimed: due.length, dispatched: marks.length, cancelled: cancelled.length };
  }
}

/** A schedule's target and website; undefined when its target is gone or inactive (it is cancelled). */
function resolve(schedule: Schedule, targets: ReadonlyMap<string, Target>, websites: ReadonlyMap<string, Website>) {
  if (schedule.target_id) {
    const target = targets.get(schedule.target_id);
    if (!target || !target.active) return undefined;
    return { target, website: websites.get(target.website_id) };
  }
  const spider = schedule.request?.spider;
  return { target: null, website: spider ? websites.get(spider) : null };
}
