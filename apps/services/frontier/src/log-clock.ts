/**
 * "By when has the frontier read everything?" A fetch may only be declared lost once the frontier
 * has applied every page event that existed by the deadline: a frontier that was down for an hour
 * must first read the outcomes that piled up, or it would call them lost. So the sweeper samples
 * the end of trawl.pages (its high watermarks) with the time it did so, and a sample counts once the
 * frontier's stored offsets have reached it on every partition: everything produced before that time
 * has been applied, and a job that did not move by then did not move at all.
 *
 * One clock for every job, not one per partition: a stalled partition holds every deadline back
 * rather than letting some jobs' outcomes be judged by a log the frontier has not read. Pure: the
 * caller reads the watermarks and the offsets.
 */

export interface LogSample {
  /** When the watermarks were read (epoch ms), before the offsets they are compared with. */
  readonly at: number;
  /** partition → offset after its last message. */
  readonly high: ReadonlyMap<number, bigint>;
}

export class LogClock {
  private samples: LogSample[] = [];
  private passed: number | null = null;

  /** @param maxSamples samples kept while none is reached; the oldest go first (that only delays). */
  constructor(private readonly maxSamples = 1_000) {}

  record(sample: LogSample): void {
    this.samples.push(sample);
    if (this.samples.length > this.maxSamples) this.samples.shift();
  }

  /**
   * The latest sample time by which `stored` (partition → next offset to apply; absent = 0) has
   * applied everything, or null while none has been reached. Samples reached are dropped.
   */
  caughtUpTo(stored: ReadonlyMap<number, bigint>): number | null {
    let reached = -1;
    for (let i = 0; i < this.samples.length; i++) {
      const s = this.samples[i]!;
      let all = true;
      for (const [partition, high] of s.high) {
        if ((stored.get(partition) ?? 0n) < high) {
          all = false;
          break;
        }
      }
      if (all) reached = i;
    }
    if (reached >= 0) {
      this.passed = Math.max(this.passed ?? -Infinity, this.samples[reached]!.at);
      this.samples = this.samples.slice(reached + 1);
    }
    return this.passed;
  }
}
