/**
 * What one consumer reports: counters on the hot path, live gauges (lag, in-flight, paused)
 * collected from the runner's state at render time, and a plain `stats()` snapshot for logs,
 * tests and health endpoints.
 *
 * The counters are prom-client's, shared by every consumer of the process under its `consumer`
 * label; `stats()` reads this consumer's own tallies, kept beside them.
 *
 * Lag is measured against the high watermark the last fetch of that partition returned, so a
 * paused partition shows the lag it had when it paused; querying the broker for fresh watermarks
 * would cost a request per partition per scrape.
 */
import type { Registry } from 'prom-client';
import { counterIn, DURATION_BUCKETS, histogramIn, liveGaugeIn, type Sample } from '@trawl/base';

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
  private readonly removers: (() => void)[] = [];
  private readonly messages;
  private readonly retries;
  private readonly failures;
  private readonly handlerSeconds;
  private readonly commits;
  private readonly assignmentsCounter;
  private readonly rereadsCounter;
  private readonly overruns;
  private readonly poisonCounter;
  private readonly decodeRetries;
  private readonly hookFailures;
  private readonly tally = {
    processed: 0,
    retried: 0,
    deadLettered: 0,
    handlerFailures: 0,
    rereads: 0,
    budgetOverruns: 0,
    poisoned: 0,
    decodeRetries: 0,
    commits: 0,
    assignments: 0,
  };

  constructor(
    registry: Registry,
    readonly consumer: string,
    readonly groupId: string,
    private readonly live: () => LiveSnapshot,
  ) {
    const c = (name: string, help: string, labels: readonly string[] = []) => counterIn(registry, name, help, ['consumer', ...labels]);
    this.messages = c('trawl_consumer_messages_total', 'Messages finished by a consumer, by topic and outcome (processed, retried, deferred, dead_lettered).', ['topic', 'outcome']);
    this.retries = c('trawl_consumer_retries_total', 'Handler failures forwarded to a retry tier (tier = its topic) or retried in place (tier = in-place).', ['topic', 'tier']);
    this.failures = c('trawl_consumer_handler_failures_total', 'Handler failures, by error class (each retry counts).', ['error_class']);
    this.handlerSeconds = histogramIn(registry, 'trawl_consumer_handler_duration_seconds', 'Duration of successful handler calls, by topic.', ['consumer', 'topic'], DURATION_BUCKETS);
    this.commits = c('trawl_consumer_commits_total', 'Offset commits sent to the group coordinator.');
    this.assignmentsCounter = c('trawl_consumer_assignments_total', 'Partition assignments received (the first, then one per rebalance).');
    this.rereadsCounter = c(
      'trawl_consumer_rereads_total',
      'Messages read again after a restart or rebalance whose delivery was recorded before they ran; isolated="true": suspects, run one at a time.',
      ['isolated'],
    );
    this.overruns = c('trawl_consumer_budget_overruns_total', 'Handlers stopped at their wall-clock budget (a delivery without an outcome).');
    this.poisonCounter = c('trawl_consumer_poisoned_total', 'Messages dead-lettered as poison: delivered TRAWL_MAX_DELIVERIES times without an outcome.', ['topic']);
    this.decodeRetries = c('trawl_consumer_decode_retries_total', 'Decodes waited out and retried, by error code (registry unreachable, schema id not found).', ['error_code']);
    this.hookFailures = c('trawl_consumer_dead_letter_hook_failures_total', 'Failed calls of the onDeadLetter hook (each is retried).');
    const labels = { consumer };
    const gauge = (name: string, help: string, labelNames: readonly string[], pick: (s: LiveSnapshot) => Sample[]) =>
      this.removers.push(liveGaugeIn(registry, name, help, ['consumer', ...labelNames]).add(() => pick(this.live())));
    gauge('trawl_consumer_in_flight', 'Handlers running now.', [], (s) => [[labels, s.inFlight]]);
    gauge('trawl_consumer_buffered', 'Messages accepted and not finished.', [], (s) => [[labels, s.buffered]]);
    gauge('trawl_consumer_paused_partitions', 'Partitions paused (backpressure, retry delay).', [], (s) => [[labels, s.partitions.filter((p) => p.paused).length]]);
    const perPartition = (value: (p: PartitionStats) => number) => (s: LiveSnapshot) =>
      s.partitions.map((p) => partitionStats(p)).map((p) => [{ consumer, topic: p.topic, partition: p.partition }, value(p)] as const);
    const partitionLabels = ['topic', 'partition'];
    gauge('trawl_consumer_lag', 'High watermark minus committed offset, per partition.', partitionLabels, perPartition((p) => p.lag));
    gauge('trawl_consumer_pending', 'High watermark minus lowest unfinished offset, per partition.', partitionLabels, perPartition((p) => p.pending));
    gauge('trawl_consumer_committed_offset', 'Last committed offset, per partition.', partitionLabels, perPartition((p) => Number(p.committed)));
  }

  processed(topic: string, durationMs: number): void {
    this.tally.processed++;
    this.messages.inc({ consumer: this.consumer, topic, outcome: 'processed' });
    this.handlerSeconds.observe({ consumer: this.consumer, topic }, durationMs / 1000);
  }

  /** A message parked until its due time (DeferredError): an outcome of its own, not a retry. */
  deferred(topic: string): void {
    this.messages.inc({ consumer: this.consumer, topic, outcome: 'deferred' });
  }

  /** A failure sent on to `tier` (a retry topic, or `in-place`); only tiers count as a retried message. */
  retried(topic: string, tier: string): void {
    this.retries.inc({ consumer: this.consumer, topic, tier });
    if (tier === 'in-place') return;
    this.tally.retried++;
    this.messages.inc({ consumer: this.consumer, topic, outcome: 'retried' });
  }

  deadLettered(topic: string): void {
    this.tally.deadLettered++;
    this.messages.inc({ consumer: this.consumer, topic, outcome: 'dead_lettered' });
  }

  handlerFailed(errorClass: string): void {
    this.tally.handlerFailures++;
    this.failures.inc({ consumer: this.consumer, error_class: errorClass });
  }

  reread(isolated: boolean): void {
    this.tally.rereads++;
    this.rereadsCounter.inc({ consumer: this.consumer, isolated: String(isolated) });
  }

  budgetOverrun(): void {
    this.tally.budgetOverruns++;
    this.overruns.inc({ consumer: this.consumer });
  }

  poisoned(topic: string): void {
    this.tally.poisoned++;
    this.poisonCounter.inc({ consumer: this.consumer, topic });
  }

  decodeRetried(errorCode: string): void {
    this.tally.decodeRetries++;
    this.decodeRetries.inc({ consumer: this.consumer, error_code: errorCode });
  }

  deadLetterHookFailed(): void {
    this.hookFailures.inc({ consumer: this.consumer });
  }

  committed(): void {
    this.tally.commits++;
    this.commits.inc({ consumer: this.consumer });
  }

  assigned(): void {
    this.tally.assignments++;
    this.assignmentsCounter.inc({ consumer: this.consumer });
  }

  stats(): ConsumerStats {
    const live = this.live();
    const partitions = live.partitions.map(partitionStats);
    return {
      consumer: this.consumer,
      groupId: this.groupId,
      ...this.tally,
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
