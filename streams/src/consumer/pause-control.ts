/**
 * Pauses and resumes partitions for several independent reasons at once. A partition may be full
 * (backpressure) and waiting for a retry's due time together; it resumes only when every reason
 * is gone. kafkajs keeps a single paused flag per partition, so the reasons live here.
 */
import type { Consumer } from 'kafkajs';
import type { Logger } from 'pino';

export type PauseReason = 'full' | 'due' | 'backoff';

export interface TopicPartition {
  readonly topic: string;
  readonly partition: number;
}

export function tpKey(topic: string, partition: number): string {
  return `${topic}\u0000${partition}`;
}

interface Paused extends TopicPartition {
  readonly reasons: Set<PauseReason>;
  readonly timers: Map<PauseReason, NodeJS.Timeout>;
  /** When each timed reason lifts (epoch ms). */
  readonly until: Map<PauseReason, number>;
}

export class PauseControl {
  private readonly paused = new Map<string, Paused>();

  constructor(
    private readonly consumer: () => Pick<Consumer, 'pause' | 'resume'> | undefined,
    private readonly logger: Logger,
    /** Called after a partition resumes, so the owner can re-check its work. */
    private readonly onResume: (tp: TopicPartition) => void = () => {},
  ) {}

  pause(topic: string, partition: number, reason: PauseReason): void {
    const key = tpKey(topic, partition);
    let entry = this.paused.get(key);
    if (!entry) {
      entry = { topic, partition, reasons: new Set(), timers: new Map(), until: new Map() };
      this.paused.set(key, entry);
      this.call('pause', topic, partition);
    }
    entry.reasons.add(reason);
  }

  /** Pauses for `reason` until `at` (epoch ms), then lifts that reason. */
  pauseUntil(topic: string, partition: number, reason: PauseReason, at: number): void {
    this.pause(topic, partition, reason);
    const entry = this.paused.get(tpKey(topic, partition))!;
    const existing = entry.timers.get(reason);
    if (existing) clearTimeout(existing);
    const timer = setTimeout(() => {
      entry.timers.delete(reason);
      entry.until.delete(reason);
      this.resume(topic, partition, reason);
    }, Math.max(0, at - Date.now()));
    entry.timers.set(reason, timer);
    entry.until.set(reason, at);
  }

  resume(topic: string, partition: number, reason: PauseReason): void {
    const key = tpKey(topic, partition);
    const entry = this.paused.get(key);
    if (!entry || !entry.reasons.delete(reason)) return;
    const timer = entry.timers.get(reason);
    if (timer) clearTimeout(timer);
    entry.timers.delete(reason);
    entry.until.delete(reason);
    if (entry.reasons.size > 0) return;
    this.paused.delete(key);
    this.call('resume', topic, partition);
    this.onResume({ topic, partition });
  }

  isPaused(topic: string, partition: number): boolean {
    return this.paused.has(tpKey(topic, partition));
  }

  has(topic: string, partition: number, reason: PauseReason): boolean {
    return this.paused.get(tpKey(topic, partition))?.reasons.has(reason) ?? false;
  }

  /** Whether any partition is paused for `reason` (cheap: no allocation, for hot paths). */
  any(reason: PauseReason): boolean {
    for (const p of this.paused.values()) if (p.reasons.has(reason)) return true;
    return false;
  }

  pausedFor(reason: PauseReason): TopicPartition[] {
    return [...this.paused.values()].filter((p) => p.reasons.has(reason)).map(({ topic, partition }) => ({ topic, partition }));
  }

  get size(): number {
    return this.paused.size;
  }

  /**
   * How soon a paused partition may resume: undefined when none is paused, 0 when one waits for
   * something without a time (backpressure lifts when work finishes), else the ms until the
   * earliest partition's last timed reason lifts. A resting fetch waits no longer than this.
   */
  resumesWithinMs(now = Date.now()): number | undefined {
    let soonest: number | undefined;
    for (const entry of this.paused.values()) {
      let at = -Infinity;
      for (const reason of entry.reasons) {
        const until = entry.until.get(reason);
        if (until === undefined) return 0;
        at = Math.max(at, until);
      }
      soonest = Math.min(soonest ?? Infinity, Math.max(0, at - now));
    }
    return soonest;
  }

  /** Drops every reason for a partition this consumer no longer owns, and un-pauses it in kafkajs. */
  forget(topic: string, partition: number): void {
    const key = tpKey(topic, partition);
    const entry = this.paused.get(key);
    if (!entry) return;
    entry.timers.forEach((t) => clearTimeout(t));
    this.paused.delete(key);
    this.call('resume', topic, partition);
  }

  /** Forgets everything without telling kafkajs (after a crash its state is new anyway). */
  clear(): void {
    for (const entry of this.paused.values()) entry.timers.forEach((t) => clearTimeout(t));
    this.paused.clear();
  }

  private call(op: 'pause' | 'resume', topic: string, partition: number): void {
    try {
      this.consumer()?.[op]([{ topic, partitions: [partition] }]);
    } catch (err) {
      // Only thrown when the consumer group is not initialised (before run, after a crash);
      // the new group starts unpaused, which the owner resyncs on its next batch.
      this.logger.debug({ err, topic, partition }, `cannot ${op} partition`);
    }
  }
}
