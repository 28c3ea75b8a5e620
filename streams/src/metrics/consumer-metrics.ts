/**
 * What one consumer reports: counters on the hot path, live gauges (lag, in-flight, paused)
 * collected from the runner's state at render time, and a plain `stats()` snapshot for logs,
 * tests and health endpoints.
 *
 * Lag is measured against the high watermark the last fetch of that partition returned, so a
 * paused partition shows the lag it had when it paused; querying the broker for fresh watermarks
 * would cost a request per partition per scrape.
 */
import type { MetricsRegistry, Sample } from './metrics-registry.ts';

export interface PartitionSnapshot {
  readonly topic: string;
  readonly partition: number;
  /** Offset after the last message in the partition, as of the last fetch. */
  readonly highWatermark: bigint | undefined;
  /** Last offset committed to the group. */
  readonly committed: bigint;
  /** Lowest offset not fully processed (the next commit, once it runs). */
  readonly lowestUnfinished: bigint;
  /** Accepted and not finished. */
  readonly unfinished: number;
  readonly paused: boolean;
}

export interface LiveSnapshot {
  /** Handlers running now (all partitions). */
  readonly inFlight: number;
  /** Accepted messages not finished (all partitions). */
  readonly buffered: number;
  readonly partitions: readonly PartitionSnapshot[];
}

export interface PartitionStats {
  readonly topic: string;
  readonly partition: number;
  readonly highWatermark: string | null;
  readonly committed: string;
  readonly lowestUnfinished: string;
  /** High watermark − committed offset: what a restart would have to (re)read. */
  readonly lag: number;
  /** High watermark − lowest unfinished: what is not processed yet. */
  readonly pending: number;
  readonly paused: boolean;
}

export interface ConsumerStats {
  readonly consumer: string;
  readonly groupId: string;
  readonly processed: number;
  readonly retried: number;
  readonly deadLettered: number;
  readonly handlerFailures: number;
  /** Re-reads whose delivery was recorded before they ran (after a restart or a rebalance). */
  readonly rereads: number;
  /** Handlers stopped at their budget (BudgetExceededError). */
  readonly budgetOverruns: number;
  /** Messages dead-lettered as poison (also counted in deadLettered). */
  readonly poisoned: number;
  /** Decodes waited out (registry unreachable, schema id not found). */
  readonly decodeRetries: number;
  readonly commits: number;
  /** Assignments received from the group (1 + the rebalances this member went through). */
  readonly assignments: number;
  readonly inFlight: number;
  readonly buffered: number;
  readonly pausedPartitions: number;
  /** Sum of the partitions' lag. */
  readonly lag: number;
  readonly partitions: readonly PartitionStats[];
}

function diff(high: bigint | undefined, low: bigint): number {
  if (high === undefined || high <= low) return 0;
  return Number(high - low);
}

export function partitionStats(p: PartitionSnapshot): PartitionStats {
  return {
    topic: p.topic,
    partition: p.partition,
    highWatermark: p.highWatermark === undefined ? null : String(p.highWatermark),
    committed: String(p.committed),
    lowestUnfinished: String(p.lowestUnfinished),
    lag: diff(p.highWatermark, p.committed),
    pending: diff(p.highWatermark, p.lowestUnfinished),
    paused: p.paused,
  };
}

export class ConsumerMetrics {
  private readonly labels: { consumer: string };
  private readonly removers: (() => void)[] = [];
  private readonly messages;
  private readonly failures;
  private readonly handlerSeconds;
  private readonly commits;
  private readonly assignmentsCounter;
  private readonly rereadsCounter;
  private readonly overruns;
  private readonly poisonCounter;
  private readonly decodeRetries;
  private readonly hookFailures;

  constructor(
    registry: MetricsRegistry,
    readonly consumer: string,
    readonly groupId: string,
    private readonly live: () => LiveSnapshot,
  ) {
    this.labels = { consumer };
    this.messages = registry.counter('trawl_consumer_messages_total', 'Messages finished by a consumer, by topic and outcome (processed, retried, dead_lettered).');
    this.failures = registry.counter('trawl_consumer_handler_failures_total', 'Handler failures, by error class (each retry counts).');
    this.handlerSeconds = registry.counter('trawl_consumer_handler_seconds_total', 'Time spent in successful handler calls.');
    this.commits = registry.counter('trawl_consumer_commits_total', 'Offset commits sent to the group coordinator.');
    this.assignmentsCounter = registry.counter('trawl_consumer_assignments_total', 'Partition assignments received (the first, then one per rebalance).');
    this.rereadsCounter = registry.counter(
      'trawl_consumer_rereads_total',
      'Messages read again after a restart or rebalance whose delivery was recorded before they ran; isolated="true": suspects, run one at a time.',
    );
    this.overruns = registry.counter('trawl_consumer_budget_overruns_total', 'Handlers stopped at their wall-clock budget (a delivery without an outcome).');
    this.poisonCounter = registry.counter('trawl_consumer_poisoned_total', 'Messages dead-lettered as poison: delivered TRAWL_MAX_DELIVERIES times without an outcome.');
    this.decodeRetries = registry.counter('trawl_consumer_decode_retries_total', 'Decodes waited out and retried, by error code (registry unreachable, schema id not found).');
    this.hookFailures = registry.counter('trawl_consumer_dead_letter_hook_failures_total', 'Failed calls of the onDeadLetter hook (each is retried).');
    const gauge = (name: string, help: string, pick: (s: LiveSnapshot) => Sample[]) =>
      this.removers.push(registry.gauge(name, help).collect(() => pick(this.live())));
    gauge('trawl_consumer_in_flight', 'Handlers running now.', (s) => [[this.labels, s.inFlight]]);
    gauge('trawl_consumer_buffered', 'Messages accepted and not finished.', (s) => [[this.labels, s.buffered]]);
    gauge('trawl_consumer_paused_partitions', 'Partitions paused (backpressure, retry delay).', (s) => [
      [this.labels, s.partitions.filter((p) => p.paused).length],
    ]);
    const perPartition = (value: (p: PartitionStats) => number) => (s: LiveSnapshot) =>
      s.partitions.map((p) => partitionStats(p)).map((p) => [{ consumer, topic: p.topic, partition: p.partition }, value(p)] as const);
    gauge('trawl_consumer_lag', 'High watermark minus committed offset, per partition.', perPartition((p) => p.lag));
    gauge('trawl_consumer_pending', 'High watermark minus lowest unfinished offset, per partition.', perPartition((p) => p.pending));
    gauge('trawl_consumer_committed_offset', 'Last committed offset, per partition.', perPartition((p) => Number(p.committed)));
  }

  private readonly processedBy = new Map<string, (by?: number) => void>();
  private handlerSecondsBound: ((by?: number) => void) | undefined;

  processed(topic: string, durationMs: number): void {
    let inc = this.processedBy.get(topic);
    if (!inc) this.processedBy.set(topic, (inc = this.messages.bind({ ...this.labels, topic, outcome: 'processed' })));
    inc();
    (this.handlerSecondsBound ??= this.handlerSeconds.bind(this.labels))(durationMs / 1000);
  }

  retried(topic: string): void {
    this.messages.inc({ ...this.labels, topic, outcome: 'retried' });
  }

  deadLettered(topic: string): void {
    this.messages.inc({ ...this.labels, topic, outcome: 'dead_lettered' });
  }

  handlerFailed(errorClass: string): void {
    this.failures.inc({ ...this.labels, error_class: errorClass });
  }

  reread(isolated: boolean): void {
    this.rereadsCounter.inc({ ...this.labels, isolated: String(isolated) });
  }

  budgetOverrun(): void {
    this.overruns.inc(this.labels);
  }

  poisoned(topic: string): void {
    this.poisonCounter.inc({ ...this.labels, topic });
  }

  decodeRetried(errorCode: string): void {
    this.decodeRetries.inc({ ...this.labels, error_code: errorCode });
  }

  deadLetterHookFailed(): void {
    this.hookFailures.inc(this.labels);
  }

  committed(): void {
    this.commits.inc(this.labels);
  }

  assigned(): void {
    this.assignmentsCounter.inc(this.labels);
  }

  stats(): ConsumerStats {
    const live = this.live();
    const partitions = live.partitions.map(partitionStats);
    return {
      consumer: this.consumer,
      groupId: this.groupId,
      processed: this.messages.sum({ ...this.labels, outcome: 'processed' }),
      retried: this.messages.sum({ ...this.labels, outcome: 'retried' }),
      deadLettered: this.messages.sum({ ...this.labels, outcome: 'dead_lettered' }),
      handlerFailures: this.failures.sum(this.labels),
      rereads: this.rereadsCounter.sum(this.labels),
      budgetOverruns: this.overruns.get(this.labels),
      poisoned: this.poisonCounter.sum(this.labels),
      decodeRetries: this.decodeRetries.sum(this.labels),
      commits: this.commits.get(this.labels),
      assignments: this.assignmentsCounter.get(this.labels),
      inFlight: live.inFlight,
      buffered: live.buffered,
      pausedPartitions: partitions.filter((p) => p.paused).length,
      lag: partitions.reduce((sum, p) => sum + p.lag, 0),
      partitions,
    };
  }

  /** Removes the live gauges (counters stay: Prometheus counters never go away mid-process). */
  close(): void {
    this.removers.splice(0).forEach((remove) => remove());
  }
}
