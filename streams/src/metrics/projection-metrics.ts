/**
 * What one projection reports: events applied and skipped (redeliveries absorbed by the stored
 * offsets), batches, failures (each a retried batch), dead letters, and per-partition lag against
 * the stored position (and the position itself). Counters are prom-client's, shared by the
 * projections of a process under their `projection` label; `stats()` reads this one's own tallies.
 */
import type { Registry } from 'prom-client';
import { counterIn, DURATION_BUCKETS, histogramIn, liveGaugeIn } from '@trawl/base';

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
  private readonly events;
  private readonly skippedCounter;
  private readonly batchesCounter;
  private readonly batchSeconds;
  private readonly failuresCounter;
  private readonly deadLetters;
  private readonly assignmentsCounter;
  private readonly rereadsCounter;
  private readonly poisonCounter;
  private readonly decodeRetries;
  private readonly removers: (() => void)[] = [];
  private readonly tally = { applied: 0, skipped: 0, batches: 0, failures: 0, deadLettered: 0, rereads: 0, poisoned: 0, decodeRetries: 0, assignments: 0 };

  constructor(
    registry: Registry,
    readonly projection: string,
    readonly groupId: string,
    private readonly live: () => readonly ProjectionPartitionSnapshot[],
  ) {
    const c = (name: string, help: string, labels: readonly string[] = []) => counterIn(registry, name, help, ['projection', ...labels]);
    this.events = c('trawl_projection_events_total', 'Events applied by a projection, by topic.', ['topic']);
    this.skippedCounter = c('trawl_projection_skipped_total', 'Redelivered events skipped because their offset was already applied.');
    this.batchesCounter = c('trawl_projection_batches_total', 'Transactions committed by a projection.');
    this.batchSeconds = histogramIn(registry, 'trawl_projection_batch_duration_seconds', 'Duration of a batch from decode to commit, by topic.', ['projection', 'topic'], DURATION_BUCKETS);
    this.failuresCounter = c('trawl_projection_failures_total', 'Batches that failed and were retried (Postgres, registry or apply errors).');
    this.deadLetters = c('trawl_projection_dead_letters_total', 'Events sent to the dead-letter topic (undecodable, or poison).');
    this.rereadsCounter = c(
      'trawl_projection_rereads_total',
      'Events of the first batch after an assignment whose delivery was recorded before they were applied; isolated="true": suspects, applied one at a time.',
      ['isolated'],
    );
    this.poisonCounter = c('trawl_projection_poisoned_total', 'Events dead-lettered as poison: delivered TRAWL_MAX_DELIVERIES times without an outcome, then skipped.');
    this.decodeRetries = c('trawl_projection_decode_retries_total', 'Batches retried because an event could not be decoded yet, by error code (registry unreachable, schema id not found).', ['error_code']);
    this.assignmentsCounter = c('trawl_projection_assignments_total', 'Partition assignments received (the first, then one per rebalance).');
    const perPartition = ['projection', 'topic', 'partition'];
    this.removers.push(
      liveGaugeIn(registry, 'trawl_projection_lag', 'High watermark minus the stored next offset, per partition.', perPartition).add(() =>
        this.live().map((p) => [{ projection, topic: p.topic, partition: p.partition }, lagOf(p)] as const),
      ),
      liveGaugeIn(registry, 'trawl_projection_position', 'The stored next offset (the projection position), per partition.', perPartition).add(() =>
        this.live().map((p) => [{ projection, topic: p.topic, partition: p.partition }, Number(p.nextOffset)] as const),
      ),
    );
  }

  applied(topic: string, count: number): void {
    if (count <= 0) return;
    this.tally.applied += count;
    this.events.inc({ projection: this.projection, topic }, count);
  }

  skipped(count: number): void {
    if (count <= 0) return;
    this.tally.skipped += count;
    this.skippedCounter.inc({ projection: this.projection }, count);
  }

  batch(topic: string, durationMs: number): void {
    this.tally.batches++;
    this.batchesCounter.inc({ projection: this.projection });
    this.batchSeconds.observe({ projection: this.projection, topic }, durationMs / 1000);
  }

  failed(): void {
    this.tally.failures++;
    this.failuresCounter.inc({ projection: this.projection });
  }

  deadLettered(count: number): void {
    if (count <= 0) return;
    this.tally.deadLettered += count;
    this.deadLetters.inc({ projection: this.projection }, count);
  }

  assigned(): void {
    this.tally.assignments++;
    this.assignmentsCounter.inc({ projection: this.projection });
  }

  reread(count: number, isolated: boolean): void {
    if (count <= 0) return;
    this.tally.rereads += count;
    this.rereadsCounter.inc({ projection: this.projection, isolated: String(isolated) }, count);
  }

  poisoned(): void {
    this.tally.poisoned++;
    this.poisonCounter.inc({ projection: this.projection });
  }

  decodeRetried(errorCode: string): void {
    this.tally.decodeRetries++;
    this.decodeRetries.inc({ projection: this.projection, error_code: errorCode });
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
      ...this.tally,
      lag: partitions.reduce((s, p) => s + p.lag, 0),
      partitions,
    };
  }

  close(): void {
    this.removers.splice(0).forEach((r) => r());
  }
}
