/**
 * Applies a batch of job and page events to the frontier: decide per job, produce what the
 * decisions emit, then save the new states. It runs inside the projection transaction that also
 * stores the consumed offsets, so the order is the one invariant 3 asks for: the new fetch
 * requests (and any JobCompleted) are acknowledged by Kafka first, then state and offsets commit
 * together. A crash in between replays the batch from the old state, and the deterministic event
 * ids make the re-emitted events duplicates that consumers drop.
 */
import type { EventMap, EventName } from '@trawl/schemas';
import type { EventProducer } from '@trawl/streams';
import type { PoolClient } from '@trawl/store';
import { decideAll, hostOf, type DeadlineTick, type FrontierEmit, type FrontierEvent, type FrontierState } from '@trawl/crawl';
import type { Logger } from 'pino';
import type { FrontierStore } from './frontier-store.ts';

export interface DecodedJobEvent {
  readonly name: EventName;
  readonly value: EventMap[EventName];
}

const HANDLED = new Set<EventName>(['JobDispatched', 'PageFetched', 'PageFailed', 'JobCancelled']);

/** What the frontier reads from the log: every FrontierEvent but the clock's tick. */
type LoggedFrontierEvent = Exclude<FrontierEvent, DeadlineTick>;

export function toFrontierEvent(e: DecodedJobEvent): LoggedFrontierEvent | undefined {
  if (!HANDLED.has(e.name)) return undefined;
  return { type: e.name, data: e.value } as LoggedFrontierEvent;
}

/** Fetch ids that this batch's page events finish (those still outstanding before it). */
function finishingFetches(events: readonly FrontierEvent[], outstanding: FrontierState['outstanding']): Set<string> {
  const ids = new Set<string>();
  for (const e of events) {
    if ((e.type === 'PageFetched' || e.type === 'PageFailed') && Object.hasOwn(outstanding, e.data.fetch_id)) ids.add(e.data.fetch_id);
  }
  return ids;
}

export interface FrontierProcessorOptions {
  /**
   * Decide in place (default) rather than on a copy of each job's URL maps. Copying is the old
   * behaviour, kept switchable (TRAWL_FRONTIER_IN_PLACE=0) so the bench can run both side by side.
   */
  readonly decideInPlace?: boolean;
}

export class FrontierProcessor {
  private readonly inPlace: boolean;

  constructor(
    private readonly store: FrontierStore,
    private readonly producer: EventProducer,
    private readonly logger: Logger,
    options: FrontierProcessorOptions = {},
  ) {
    this.inPlace = options.decideInPlace ?? true;
  }

  /** `now`: the clock the decisions are stamped with (a job's deadline counts from its last move). */
  async apply(events: readonly DecodedJobEvent[], tx: PoolClient, now = Date.now()): Promise<{ emitted: number }> {
    const byJob = new Map<string, FrontierEvent[]>();
    for (const e of events) {
      const fe = toFrontierEvent(e);
      if (!fe) continue;
      const jobId = fe.data.job_id;
      let list = byJob.get(jobId);
      if (!list) byJob.set(jobId, (list = []));
      list.push(fe);
    }
    return this.decideAndProduce(byJob, tx, now);
  }

  /**
   * The deadline's tick for the given jobs, in `tx` like a batch: each job silent for `deadlineMs`
   * by `at` gets PageFailed FETCH_LOST for what it still waits for, and completes. The decider
   * re-checks each job from its locked state, so a job that moved meanwhile is left alone.
   */
  async expire(jobIds: readonly string[], tick: { at: number; deadlineMs: number }, tx: PoolClient): Promise<{ emitted: number }> {
    const event: DeadlineTick = { type: 'Tick', at: tick.at, deadlineMs: tick.deadlineMs };
    return this.decideAndProduce(new Map(jobIds.map((id) => [id, [event]])), tx, tick.at);
  }

  private async decideAndProduce(byJob: ReadonlyMap<string, FrontierEvent[]>, tx: PoolClient, now: number): Promise<{ emitted: number }> {
    if (byJob.size === 0) return { emitted: 0 };
    try {
      const states = await this.store.load(tx, [...byJob.keys()]);
      const decisions = [...byJob].map(([jobId, jobEvents]) => {
        const before = states.get(jobId)!;
        const outstandingBefore = before.state.outstanding;
        // Looked up before deciding: the decision updates this very state in place.
        const candidates = finishingFetches(jobEvents, outstandingBefore);
        // In place, not copied: a copy costs O(URLs seen) per batch, quadratic over a large job
        // (at 5,000 pages it was a fifth of the frontier's CPU). The cached state is given up
        // here; the catch below drops it from the cache if this batch does not commit.
        const decision = decideAll(before.state, jobEvents, { reuseState: this.inPlace, now });
        // A cancel, a failure or a deadline replaces the outstanding map: whatever it still held is over too.
        if (decision.state.outstanding !== outstandingBefore) for (const id in outstandingBefore) candidates.add(id);
        const finished = [...candidates].filter((id) => !Object.hasOwn(decision.state.outstanding, id));
        return { before, decision, finished };
      });

      // 1. Produce, and wait for every acknowledgement.
      const sends: Promise<string>[] = [];
      for (const { decision } of decisions) for (const e of decision.emit) sends.push(this.produce(e));
      await Promise.all(sends);

      // 2. Only then save the states (the caller commits them with the offsets).
      for (const { before, decision, finished } of decisions) {
        await this.store.save(tx, before, decision.state, decision.emit, finished);
        const lost = decision.emit.filter((e) => e.type === 'PageFailed');
        if (lost.length > 0) this.logger.warn({ job_id: decision.state.job_id, lost: lost.length, urls: lost.slice(0, 5).map((e) => e.data.url) }, 'fetches lost: no outcome by the deadline');
        const done = decision.emit.find((e) => e.type === 'JobCompleted' || e.type === 'JobFailed');
        if (done) this.logger.info({ job_id: decision.state.job_id, event: done.type, counters: decision.state.counters }, 'job ended');
      }
      return { emitted: sends.length };
    } catch (err) {
      // The cached states may have been changed in place by a batch that will roll back.
      this.store.forget(byJob.keys());
      throw err;
    }
  }

  private produce(e: FrontierEmit): Promise<string> {
    const { event_id, occurred_at, causation_id, ...body } = e.data;
    const options = { eventId: event_id, occurredAt: occurred_at, causationId: causation_id };
    switch (e.type) {
      case 'FetchRequested':
        // Keyed by host: one host's fetches share a partition, so one worker owns its politeness.
        return this.producer.emit('FetchRequested', body as Omit<typeof e.data, 'event_id' | 'occurred_at' | 'causation_id'>, { ...options, key: hostOf(e.data.url) });
      case 'PageFailed':
        return this.producer.emit('PageFailed', body as Omit<typeof e.data, 'event_id' | 'occurred_at' | 'causation_id'>, options);
      case 'JobCompleted':
        return this.producer.emit('JobCompleted', body as Omit<typeof e.data, 'event_id' | 'occurred_at' | 'causation_id'>, options);
      case 'JobFailed':
        return this.producer.emit('JobFailed', body as Omit<typeof e.data, 'event_id' | 'occurred_at' | 'causation_id'>, options);
    }
  }
}
