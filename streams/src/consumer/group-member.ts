/**
 * The group-member runtime: the one life every Kafka consumer of Trawl leads, whatever it does
 * with what it reads. The parallel work consumer (event-consumer.ts), the Postgres projections
 * (projection/run-projection.ts) and the live feed (live-subscriber.ts) are strategies over it: a
 * strategy says how a batch is processed and what is committed where; this file does the rest,
 * once.
 *
 * Start. The topics are checked, the strategy prepares (connects its producer, waits for
 * Postgres), then the member connects, subscribes and runs with kafkajs's `eachBatch`, auto-commit
 * and auto-resolve off: what is committed, and when a fetch position moves, is the strategy's
 * word alone.
 *
 * A batch. eachBatch never throws: a throw makes kafkajs re-fetch and, after its retries, restart
 * the consumer. A strategy's failure is logged here and its batch simply not resolved. Each batch
 * lends the runtime its heartbeat and its commit (both stay valid for the member's generation).
 *
 * The group. On GROUP_JOIN the strategy reconciles what it holds with the new assignment; on
 * REBALANCING what is finished is committed (best effort, before the partitions move); on CRASH
 * what the member held is dropped (the group is left) and, when kafkajs gives up for good, the
 * member stops and `done` says it crashed. `ready` resolves at the first assignment, or — for a
 * member reading from "now" — once the first fetch after it answered (kafkajs resolves a new
 * group's latest positions inside that fetch), so everything produced after `ready` is read.
 *
 * While working. Commits go through one OffsetCommitter (a tick, on request, on rebalance, at
 * stop); a HeartbeatKeeper beats while work is in flight, since kafkajs beats only between
 * batches and a batch may outlast the session; PauseControl keeps the reasons a partition is
 * paused; a stats line is logged every interval.
 *
 * Deliveries without an outcome (invariant 8: every unit of work ends). A member that may re-read
 * what a dead predecessor was running counts those deliveries and dead-letters a message as poison
 * after TRAWL_MAX_DELIVERIES. The runtime makes the counter from `deliveries` (delivery-counter.ts:
 * Postgres rows, the verdict of delivery-verdict.ts, suspects' turns) and closes it at stop; the
 * strategy says what a re-read is and applies the verdict — the parallel consumer per message in
 * its re-read window (reread-windows.ts, message-processor.ts), a projection per first batch of a
 * partition (reread-batch.ts). A handler's time budget (work-budget.ts) ends its delivery without
 * an outcome, counted the same way; a loop blocked for good is the loop watchdog's.
 *
 * Stop. Fetching is paused everywhere, queued work dropped, running work given `drainTimeoutMs`
 * to finish (then abandoned: it runs again elsewhere), what is finished committed, the group
 * left, and the strategy's resources closed. A second call returns the same promise.
 */
import type { Consumer, ConsumerConfig, EachBatchPayload, Kafka } from 'kafkajs';
import type { Logger } from 'pino';
import { requireTopics } from '../topics/require-topics.ts';
import { startStatsLog, type StatsSource } from '../metrics/stats-log.ts';
import { DeliveryCounter, maxDeliveriesOf, type DeliveryCounterOptions } from './delivery-counter.ts';
import { HeartbeatKeeper } from './heartbeat-keeper.ts';
import { OffsetCommitter, groupOffsetsByTopic, type CommitTarget } from './offset-committer.ts';
import { PauseControl, tpKey } from './pause-control.ts';
import { batchBytes, type FlowMinBytes } from './flow-min-bytes.ts';
import { RestingFetch, restSettings } from './resting-fetch.ts';

export type GroupOffsets = { topic: string; partition: number; offset: string }[];

export interface MemberEnd {
  readonly reason: 'stopped' | 'crashed';
  readonly error?: unknown;
}

/** What every member hands its caller. */
export interface GroupMemberHandle<Stats> {
  readonly name: string;
  readonly groupId: string;
  /** Resolves when the member can read (`MemberSetup.readyWhen`), or when it stopped first. */
  readonly ready: Promise<void>;
  /** Resolves when the member has stopped, or died of a crash kafkajs does not restart. */
  readonly done: Promise<MemberEnd>;
  stats(): Stats;
  /** Stops fetching, lets running work finish (up to the drain time), commits, leaves the group. */
  stop(): Promise<void>;
}

/** What the runtime lends its strategy. */
export interface MemberRuntime {
  readonly logger: Logger;
  readonly pauses: PauseControl;
  /** Aborted as soon as the member begins to stop. */
  readonly stopping: AbortSignal;
  /** The delivery counter; only a member set up with `deliveries` has one. */
  readonly deliveries: DeliveryCounter;
  /** Commits for the group in the member's current generation; rejects before its first batch. */
  commitToGroup(offsets: GroupOffsets): Promise<void>;
  /** Asks for a commit soon (coalesced with other requests). */
  requestCommit(): void;
  /** Moves a partition's fetch position; throws when the consumer is not running. */
  seek(topic: string, partition: number, offset: bigint): void;
  /** Work that outlives its batch settled: a drain waiting for the member to go idle looks again. */
  settled(): void;
}

/** How a member reads: everything the runtime needs to know before it connects. */
export interface MemberSetup {
  /** Names the member in its lifecycle log lines: `<kind> started`, `<kind> stats`, `<kind> stopped`. */
  readonly kind: string;
  /** What a drain that runs out of time gives up, for the log: handlers, transactions. */
  readonly work: string;
  readonly name: string;
  readonly kafka: Kafka;
  readonly logger: Logger;
  /** kafkajs's consumer settings: group, session, fetch sizes, assigners. */
  readonly consumer: ConsumerConfig & { readonly groupId: string };
  readonly subscriptions: readonly { readonly topics: readonly string[]; readonly fromBeginning: boolean }[];
  readonly partitionsConsumedConcurrently: number;
  /** Checked at start (`requireTopics`); none: not checked. */
  readonly requiredTopics?: readonly string[];
  /** The commit tick; none for a member that commits nothing to the group. */
  readonly commitIntervalMs?: number;
  readonly heartbeatIntervalMs: number;
  readonly drainTimeoutMs: number;
  /** Period of the stats line; none or 0: not logged. */
  readonly statsLogIntervalMs?: number;
  /** `assigned`: ready at the first assignment; `positioned`: once the first fetch after it answered. */
  readonly readyWhen: 'assigned' | 'positioned';
  /** Lifecycle lines at debug rather than info: a member that is a service's side line, not its work. */
  readonly quiet?: boolean;
  /** The fetch's minimum bytes when it follows the flow (`consumer.minBytes` is this object): told each batch's bytes. */
  readonly fetchFlow?: Pick<FlowMinBytes, 'observe'>;
  /** For a member that counts re-reads' deliveries; `maxDeliveries` as the option gave it. */
  readonly deliveries?: Omit<DeliveryCounterOptions, 'groupId' | 'logger' | 'maxDeliveries'> & { readonly maxDeliveries: number | undefined };
}

/** What a strategy does: how a batch is processed and what may be committed. */
export interface MemberStrategy<Stats> {
  /** What the `<kind> started` line says besides. */
  describe(): object;
  /** Before connecting: the producer, Postgres, the read model's tables. */
  prepare?(): Promise<void>;
  /** Processes (or takes in) one partition's fetched batch; a throw is logged and the batch left unresolved. */
  onBatch(payload: EachBatchPayload): Promise<void> | void;
  /** A new assignment (keys from tpKey). */
  onAssigned(assigned: ReadonlySet<string>): void;
  /** The consumer crashed: whatever the member held is someone else's now. */
  onCrash(): void;
  /** Work running beyond its batch's eachBatch (the parallel consumer's handlers). */
  inFlight?(): number;
  /** What the group commit carries now (with `commitIntervalMs`). */
  commitTargets?(): CommitTarget[];
  onCommitted?(): void;
  /** Stopping: work accepted and not started is dropped. */
  dropQueued?(): void;
  /** The drain time ran out: running work is told to give up. */
  abandonRunning?(): void;
  stats(): Stats;
  /** What the stats line's rate counts, and what it says besides. */
  readonly statsLine?: StatsSource;
  /** Last: the strategy's own resources (producer, pool, metrics); `idle`: nothing was abandoned. */
  close(idle: boolean): Promise<void>;
}

/** kafkajs's defaults, for a member whose setup leaves them out. */
const KAFKAJS_SESSION_TIMEOUT_MS = 30_000;
const KAFKAJS_MAX_WAIT_MS = 5_000;

function deferred<T>(): { promise: Promise<T>; resolve: (value: T) => void } {
  let resolve!: (value: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

class GroupMember<Stats> implements MemberRuntime {
  readonly logger: Logger;
  readonly pauses: PauseControl;
  private readonly stopController = new AbortController();
  readonly stopping = this.stopController.signal;
  private readonly counter: DeliveryCounter | undefined;
  readonly strategy: MemberStrategy<Stats>;
  private readonly committer: OffsetCommitter | undefined;
  private readonly heartbeats: HeartbeatKeeper;
  /** The fetch's wait and minimum bytes: the consumer's own while work flows, longer while idle. */
  private readonly fetchPace: RestingFetch;
  private consumer: Consumer | undefined;
  private groupCommit: ((offsets: GroupOffsets) => Promise<void>) | undefined;
  /** eachBatch calls running now. */
  private batches = 0;
  private idleWaiters: (() => void)[] = [];
  private stopped: Promise<void> | undefined;
  private crashError: unknown;
  private stopStatsLog: () => void = () => {};
  private readonly readyState = deferred<void>();
  private readonly doneState = deferred<MemberEnd>();
  readonly ready = this.readyState.promise;
  readonly done = this.doneState.promise;

  constructor(
    private readonly setup: MemberSetup,
    build: (runtime: MemberRuntime) => MemberStrategy<Stats>,
  ) {
    this.logger = setup.logger;
    this.pauses = new PauseControl(() => this.consumer, this.logger);
    const d = setup.deliveries;
    this.counter = d && new DeliveryCounter({ ...d, maxDeliveries: maxDeliveriesOf(d.maxDeliveries), groupId: setup.consumer.groupId, logger: this.logger });
    this.strategy = build(this);
    const s = this.strategy;
    this.committer =
      setup.commitIntervalMs === undefined || !s.commitTargets
        ? undefined
        : new OffsetCommitter({
            collect: () => s.commitTargets!(),
            send: (offsets) => this.commitToGroup(offsets),
            logger: this.logger,
            intervalMs: setup.commitIntervalMs,
            idle: () => this.busy() === 0,
            ...(s.onCommitted ? { onCommitted: () => s.onCommitted!() } : {}),
          });
    this.heartbeats = new HeartbeatKeeper(setup.heartbeatIntervalMs, () => this.busy() > 0, this.logger, () => this.committer?.request());
    const rest = restSettings(setup.consumer.sessionTimeout ?? KAFKAJS_SESSION_TIMEOUT_MS);
    this.fetchPace = new RestingFetch({
      busyWaitMs: setup.consumer.maxWaitTimeInMs ?? KAFKAJS_MAX_WAIT_MS,
      minBytes: setup.consumer.minBytes ?? 1,
      ...rest,
      // A paused partition comes back, and a running handler's backpressure lifts, at the next fetch.
      hold: () => this.busy() > 0,
      resumesWithinMs: () => this.pauses.resumesWithinMs(),
    });
  }

  get deliveries(): DeliveryCounter {
    if (!this.counter) throw new Error(`${this.setup.name} counts no deliveries`);
    return this.counter;
  }

  commitToGroup(offsets: GroupOffsets): Promise<void> {
    return this.groupCommit ? this.groupCommit(offsets) : Promise.reject(new Error('no batch received from this group member yet'));
  }

  requestCommit(): void {
    this.committer?.request();
  }

  seek(topic: string, partition: number, offset: bigint): void {
    if (!this.consumer) throw new Error('the consumer is not running');
    this.consumer.seek({ topic, partition, offset: String(offset) });
    this.fetchPace.wake();
  }

  settled(): void {
    if (this.busy() === 0) this.idleWaiters.splice(0).forEach((wake) => wake());
  }

  private info(fields: object, message: string): void {
    if (this.setup.quiet) this.logger.debug(fields, message);
    else this.logger.info(fields, message);
  }

  async start(): Promise<void> {
    const { setup, strategy } = this;
    if (setup.requiredTopics) await requireTopics(setup.kafka, setup.requiredTopics);
    await strategy.prepare?.();
    // kafkajs reads both at each fetch (RestingFetch.valueOf); its types say number.
    const consumer = setup.kafka.consumer({
      ...setup.consumer,
      maxWaitTimeInMs: this.fetchPace.maxWaitTimeInMs as unknown as number,
      minBytes: this.fetchPace.minBytes as unknown as number,
    });
    this.consumer = consumer;
    consumer.on(consumer.events.GROUP_JOIN, ({ payload }) => this.onGroupJoin(payload.memberAssignment));
    if (this.committer) consumer.on(consumer.events.REBALANCING, () => void this.committer!.flush());
    consumer.on(consumer.events.CRASH, ({ payload }) => this.onCrash(payload.error, payload.restart));
    if (setup.readyWhen === 'positioned') this.readyAfterFirstFetch(consumer);
    await consumer.connect();
    for (const { topics, fromBeginning } of setup.subscriptions) if (topics.length > 0) await consumer.subscribe({ topics: [...topics], fromBeginning });
    await consumer.run({
      autoCommit: false,
      eachBatchAutoResolve: false,
      partitionsConsumedConcurrently: setup.partitionsConsumedConcurrently,
      eachBatch: (payload) => this.onBatch(payload),
    });
    this.committer?.start();
    this.heartbeats.start();
    if (strategy.statsLine) this.stopStatsLog = startStatsLog(this.logger, setup.statsLogIntervalMs ?? 0, strategy.statsLine, `${setup.kind} stats`);
    this.info(strategy.describe(), `${setup.kind} started`);
  }

  private async onBatch(payload: EachBatchPayload): Promise<void> {
    this.heartbeats.use(payload.heartbeat);
    this.groupCommit = (offsets) => payload.commitOffsetsIfNecessary({ topics: groupOffsetsByTopic(offsets) });
    if (this.stopping.aborted || !payload.isRunning() || payload.isStale() || payload.batch.messages.length === 0) return;
    this.fetchPace.wake();
    this.committer?.arm();
    this.setup.fetchFlow?.observe(batchBytes(payload.batch.messages));
    this.batches += 1;
    try {
      await this.strategy.onBatch(payload);
    } catch (err) {
      // A bug in a strategy, not in the messages: the batch stays unresolved and is fetched again.
      this.logger.error({ err, topic: payload.batch.topic, partition: payload.batch.partition }, 'batch processing crashed');
    } finally {
      this.batches -= 1;
      this.settled();
    }
  }

  private onGroupJoin(assignment: Record<string, number[]>): void {
    const assigned = new Set<string>();
    // A new assignment is fetched from at the busy pace (a live feed is ready after that fetch).
    this.fetchPace.wake();
    for (const [topic, partitions] of Object.entries(assignment)) for (const p of partitions) assigned.add(tpKey(topic, p));
    this.strategy.onAssigned(assigned);
    this.info({ assignment }, 'partitions assigned');
    if (this.setup.readyWhen === 'assigned') this.readyState.resolve();
  }

  /**
   * kafkajs resolves a new group's "latest" position of a partition inside its first fetch from the
   * partition's leader: ready once every broker fetched from after the join has answered once.
   */
  private readyAfterFirstFetch(consumer: Consumer): void {
    let joined = false;
    const fetching = new Set<number>();
    const answered = new Set<number>();
    consumer.on(consumer.events.GROUP_JOIN, () => {
      joined = true;
      fetching.clear();
      answered.clear();
    });
    consumer.on(consumer.events.FETCH_START, ({ payload }) => {
      if (joined) fetching.add(payload.nodeId);
    });
    consumer.on(consumer.events.FETCH, ({ payload }) => {
      if (!joined || !fetching.has(payload.nodeId)) return;
      answered.add(payload.nodeId);
      if (answered.size === fetching.size) this.readyState.resolve();
    });
  }

  private onCrash(error: unknown, restart: boolean): void {
    this.logger.error({ err: error, restart }, 'kafka consumer crashed');
    // The group is left on a crash: whatever this member held is someone else's now.
    this.strategy.onCrash();
    this.pauses.clear();
    this.groupCommit = undefined;
    if (!restart) {
      this.crashError = error;
      void this.stop();
    }
  }

  private busy(): number {
    return this.batches + (this.strategy.inFlight?.() ?? 0);
  }

  private waitIdle(timeoutMs: number): Promise<boolean> {
    if (this.busy() === 0) return Promise.resolve(true);
    return new Promise((resolve) => {
      const timer = setTimeout(() => resolve(false), timeoutMs);
      this.idleWaiters.push(() => {
        clearTimeout(timer);
        resolve(true);
      });
    });
  }

  stop(): Promise<void> {
    this.stopped ??= this.shutdown();
    return this.stopped;
  }

  private async shutdown(): Promise<void> {
    const { consumer, setup, strategy } = this;
    this.stopController.abort();
    try {
      // No more fetching: pause everything, and give up what has not started.
      try {
        consumer?.pause(setup.subscriptions.flatMap(({ topics }) => topics.map((topic) => ({ topic }))));
      } catch {
        // not running (never started, or crashed): nothing to pause
      }
      strategy.dropQueued?.();
      if (!(await this.waitIdle(setup.drainTimeoutMs))) {
        this.logger.warn({ running: this.busy() }, `drain timed out; abandoning running ${setup.work}`);
        strategy.abandonRunning?.();
      }
      await this.committer?.flush();
    } finally {
      this.committer?.stop();
      this.heartbeats.stop();
      this.stopStatsLog();
      this.pauses.clear();
      await consumer?.disconnect().catch((err: unknown) => this.logger.warn({ err }, 'consumer disconnect failed'));
      await this.counter?.close();
      await strategy.close(this.busy() === 0);
      this.readyState.resolve();
      this.info({}, `${setup.kind} stopped`);
      this.doneState.resolve(this.crashError === undefined ? { reason: 'stopped' } : { reason: 'crashed', error: this.crashError });
    }
  }
}

/**
 * Starts a group member whose strategy `build` makes from the runtime; resolves once it runs
 * (`ready` says when it has partitions). A member that fails to start is stopped, and the error
 * thrown.
 */
export async function startGroupMember<Stats>(setup: MemberSetup, build: (runtime: MemberRuntime) => MemberStrategy<Stats>): Promise<GroupMemberHandle<Stats>> {
  const member = new GroupMember(setup, build);
  try {
    await member.start();
  } catch (err) {
    await member.stop().catch(() => {});
    throw err;
  }
  return {
    name: setup.name,
    groupId: setup.consumer.groupId,
    ready: member.ready,
    done: member.done,
    stats: () => member.strategy.stats(),
    stop: () => member.stop(),
  };
}
