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
    this.deadLetters = registry.counter('trawl_projection_dead_letters_total', 'Undecodable events sent to the dead-letter topic.');
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
      assignments: this.assignmentsCounter.get(this.labels),
      lag: partitions.reduce((s, p) => s + p.lag, 0),
      partitions,
    };
  }

  close(): void {
    this.removers.splice(0).forEach((r) => r());
  }
}
