/**
 * What one projection reports: events applied and skipped (redeliveries absorbed by the stored
 * offsets), batches, failures (each a retried batch), dead letters, and per-partition lag against
 * the stored position.
 */
import type { MetricsRegistry } from './metrics-registry.ts';

export interface ProjectionPartitionSnapshot {
  readonly topic: string;
  readonly partition: number;
  readonly nextOffset: bigint;
  readonly highWatermark: bigint | undefined;
  readonly paused: boolean;
}

export interface ProjectionPartitionStats {
  readonly topic: string;
  readonly partition: number;
  readonly nextOffset: string;
  readonly highWatermark: string | null;
  readonly lag: number;
  readonly paused: boolean;
}

export interface ProjectionStats {
  readonly projection: string;
  readonly groupId: string;
  readonly applied: number;
  readonly skipped: number;
  readonly batches: number;
  readonly failures: number;
  readonly deadLettered: number;
  /** Events of a partition's first batch after an assignment whose delivery was recorded before it was applied. */
  readonly rereads: number;
  /** Events dead-lettered as poison (also counted in deadLettered). */
  readonly poisoned: number;
  /** Batches retried because their events could not be decoded yet (registry unreachable, schema id not found). */
  readonly decodeRetries: number;
  /** Assignments received from the group (1 + the rebalances this member went through). */
  readonly assignments: number;
  readonly lag: number;
  readonly partitions: readonly ProjectionPartitionStats[];
}

function lagOf(p: ProjectionPartitionSnapshot): number {
  return p.highWatermark !== undefined && p.highWatermark > p.nextOffset ? Number(p.highWatermark - p.nextOffset) : 0;
}

export class ProjectionMetrics {
  private readonly labels: { projection: string };
  private readonly events;
  private readonly skippedCounter;
  private readonly batchesCounter;
  private readonly failuresCounter;
  private readonly deadLetters;
  private readonly assignmentsCounter;
  private readonly rereadsCounter;
  private readonly poisonCounter;
  private readonly decodeRetries;
  private readonly removers: (() => void)[] = [];

  constructor(
    registry: MetricsRegistry,
    readonly projection: string,
    readonly groupId: string,
    private readonly live: () => readonly ProjectionPartitionSnapshot[],
  ) {
    this.labels = { projection };
    this.events = registry.counter('trawl_projection_events_total', 'Events applied by a projection, by topic.');
    this.skippedCounter = registry.counter('trawl_projection_skipped_total', 'Redelivered events skipped because their offset was already applied.');
    this.batchesCounter = registry.counter('trawl_projection_batches_total', 'Transactions committed by a projection.');
    this.failuresCounter = registry.counter('trawl_projection_failures_total', 'Batches that failed and were retried (Postgres, registry or apply errors).');
    this.deadLetters = registry.counter('trawl_projection_dead_letters_total', 'Events sent to the dead-letter topic (undecodable, or poison).');
    this.rereadsCounter = registry.counter(
      'trawl_projection_rereads_total',
      'Events of the first batch after an assignment whose delivery was recorded before they were applied; isolated="true": suspects, applied one at a time.',
    );
    this.poisonCounter = registry.counter('trawl_projection_poisoned_total', 'Events dead-lettered as poison: delivered TRAWL_MAX_DELIVERIES times without an outcome, then skipped.');
    this.decodeRetries = registry.counter('trawl_projection_decode_retries_total', 'Batches retried because an event could not be decoded yet, by error code (registry unreachable, schema id not found).');
    this.assignmentsCounter = registry.counter('trawl_projection_assignments_total', 'Partition assignments received (the first, then one per rebalance).');
    this.removers.push(
      registry.gauge('trawl_projection_lag', 'High watermark minus the stored next offset, per partition.').collect(() =>
        this.live().map((p) => [{ projection, topic: p.topic, partition: p.partition }, lagOf(p)] as const),
      ),
    );
  }

  applied(topic: string, count: number): void {
    if (count > 0) this.events.inc({ ...this.labels, topic }, count);
  }

  skipped(count: number): void {
    if (count > 0) this.skippedCounter.inc(this.labels, count);
  }

  batch(): void {
    this.batchesCounter.inc(this.labels);
  }

  failed(): void {
    this.failuresCounter.inc(this.labels);
  }

  deadLettered(count: number): void {
    if (count > 0) this.deadLetters.inc(this.labels, count);
  }

  assigned(): void {
    this.assignmentsCounter.inc(this.labels);
  }

  reread(count: number, isolated: boolean): void {
    if (count > 0) this.rereadsCounter.inc({ ...this.labels, isolated: String(isolated) }, count);
  }

  poisoned(): void {
    this.poisonCounter.inc(this.labels);
  }

  decodeRetried(errorCode: string): void {
    this.decodeRetries.inc({ ...this.labels, error_code: errorCode });
  }

  stats(): ProjectionStats {
    const partitions = this.live().map((p) => ({
      topic: p.topic,
      partition: p.partition,
      nextOffset: String(p.nextOffset),
      highWatermark: p.highWatermark === undefined ? null : String(p.highWatermark),
      lag: lagOf(p),
      paused: p.paused,
    }));
    return {
      projection: this.projection,
      groupId: this.groupId,
      applied: this.events.sum(this.labels),
      skipped: this.skippedCounter.get(this.labels),
      batches: this.batchesCounter.get(this.labels),
      failures: this.failuresCounter.get(this.labels),
      deadLettered: this.deadLetters.get(this.labels),
      rereads: this.rereadsCounter.sum(this.labels),
      poisoned: this.poisonCounter.get(this.labels),
      decodeRetries: this.decodeRetries.sum(this.labels),
      assignments: this.assignmentsCounter.get(this.labels),
      lag: partitions.reduce((s, p) => s + p.lag, 0),
      partitions,
    };
  }

  close(): void {
    this.removers.splice(0).forEach((r) => r());
  }
}
