/**
 * Sends offset commits: on a timer, when asked (backpressure wants the window to move), and on
 * rebalance and shutdown. The timer runs only while there is work: `arm()` (each batch) starts it,
 * and a tick that finds the owner idle (`idle`) with nothing to commit stops it, so an idle
 * consumer does not wake up every interval for nothing. One commit is in flight at a time; requests made meanwhile coalesce
 * into the next one. A failed commit is logged and simply retried by the next one, since the
 * offsets it carried are still the right ones to commit (or older than them).
 */
import type { Logger } from 'pino';

export interface CommitTarget {
  readonly topic: string;
  readonly partition: number;
  /** The next offset to read, as Kafka commits it. */
  readonly offset: bigint;
  /** Called after the coordinator acknowledged this offset. */
  readonly acknowledge: () => void;
}

export interface OffsetCommitterOptions {
  readonly collect: () => CommitTarget[];
  readonly send: (offsets: { topic: string; partition: number; offset: string }[]) => Promise<void>;
  readonly logger: Logger;
  readonly intervalMs: number;
  readonly onCommitted?: (count: number) => void;
  /** Nothing running that could still finish (and move an offset): an empty tick may stop the timer. Default never. */
  readonly idle?: () => boolean;
}

export class OffsetCommitter {
  private timer: NodeJS.Timeout | undefined;
  private inFlight: Promise<boolean> | undefined;
  private again = false;
  private scheduled = false;
  private started = false;

  constructor(private readonly options: OffsetCommitterOptions) {}

  start(): void {
    this.started = true;
    this.arm();
  }

  /** Work arrived: commit on the timer until it is done and committed. */
  arm(): void {
    if (!this.started || this.timer) return;
    this.timer = setInterval(() => this.tick(), this.options.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    this.started = false;
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  private tick(): void {
    if (this.options.idle?.() && !this.inFlight && this.options.collect().length === 0) {
      clearInterval(this.timer);
      this.timer = undefined;
      return;
    }
    void this.flush();
  }

  /** Commits soon (next turn of the event loop), coalescing with other requests. */
  request(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      void this.flush();
    });
  }

  /** Commits what can be committed now; resolves true when everything collected was acknowledged. */
  flush(): Promise<boolean> {
    if (this.inFlight) {
      this.again = true;
      return this.inFlight.then(() => this.flush());
    }
    this.again = false;
    const attempt = this.commitOnce().finally(() => {
      this.inFlight = undefined;
    });
    this.inFlight = attempt;
    return attempt;
  }

  private async commitOnce(): Promise<boolean> {
    const targets = this.options.collect();
    if (targets.length === 0) return true;
    try {
      await this.options.send(targets.map((t) => ({ topic: t.topic, partition: t.partition, offset: String(t.offset) })));
      targets.forEach((t) => t.acknowledge());
      this.options.onCommitted?.(targets.length);
      return true;
    } catch (err) {
      this.options.logger.warn({ err, partitions: targets.length }, 'offset commit failed; the next commit carries it');
      return false;
    }
  }
}

/** kafkajs's commit payload shape from flat (topic, partition, offset) triples. */
export function groupOffsetsByTopic(offsets: readonly { topic: string; partition: number; offset: string }[]) {
  const topics = new Map<string, { partition: number; offset: string }[]>();
  for (const { topic, partition, offset } of offsets) {
    let list = topics.get(topic);
    if (!list) topics.set(topic, (list = []));
    list.push({ partition, offset });
  }
  return [...topics].map(([topic, partitions]) => ({ topic, partitions }));
}
