/**
 * The jobs a worker knows to be over, from a live subscription to trawl.jobs: a cancelled job's
 * queued fetches are skipped instead of fetched. Best effort by design — a worker that starts after
 * the cancellation still fetches what is queued, and the frontier ignores those pages — so it
 * needs no state of its own. Bounded: the oldest ids are forgotten first.
 */
import { subscribeLive, TOPICS, type LiveSubscription, type Logger } from '@trawl/streams';
import type { Kafka } from 'kafkajs';

export class EndedJobs implements ReadonlySet<string> {
  private readonly ids = new Set<string>();
  private subscription: LiveSubscription | undefined;

  constructor(private readonly max = 100_000) {}

  async start(options: { kafka: Kafka; logger: Logger }): Promise<void> {
    this.subscription = await subscribeLive({
      ...options,
      topics: [TOPICS.jobs],
      names: ['JobCancelled', 'JobCompleted', 'JobFailed'],
      groupPrefix: 'trawl-worker-ended',
      onEvent: (e) => this.add((e.value as { job_id: string }).job_id),
    });
  }

  add(jobId: string): void {
    this.ids.add(jobId);
    if (this.ids.size > this.max) this.ids.delete(this.ids.values().next().value!);
  }

  async stop(): Promise<void> {
    await this.subscription?.stop();
  }

  has(jobId: string): boolean {
    return this.ids.has(jobId);
  }
  get size(): number {
    return this.ids.size;
  }
  forEach(cb: (value: string, value2: string, set: ReadonlySet<string>) => void): void {
    this.ids.forEach((v) => cb(v, v, this));
  }
  entries() {
    return this.ids.entries();
  }
  keys() {
    return this.ids.keys();
  }
  values() {
    return this.ids.values();
  }
  [Symbol.iterator]() {
    return this.ids[Symbol.iterator]();
  }
}
