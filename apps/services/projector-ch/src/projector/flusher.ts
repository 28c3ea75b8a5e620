/**
 * Batches events for ClickHouse, which wants few large inserts rather than many small ones: a
 * flush happens when `maxRows` events wait, the oldest has waited `maxDelayMs`, no event has
 * arrived for `quietMs` (a burst is over, so its analytics need not wait for the timer; a steady
 * flow never goes quiet that long between fetches), or a job ended (JobCompleted or JobFailed:
 * its figures are final, and whoever watches the crawl wants them now; the flush waits one turn
 * of the event loop so that the rest of the fetch that carried the end comes along). Each event's
 * promise settles when the flush that carries it is stored, so the consumer commits an offset
 * only after its row is in ClickHouse.
 *
 * When ClickHouse (or the swap lock's Postgres) is away, the flush is retried with backoff until
 * it succeeds — the handlers keep waiting, the consumer's buffer fills, its partitions pause —
 * and the projector catches up when the database returns. Nothing is dropped, and nothing is
 * counted twice: every try first leaves out the positions a previous try already stored (and
 * page events stored under another position, see writeFacts).
 */
import { Backoff, sleep, type Logger } from '@trawl/streams';
import type { ClickHouse } from '@trawl/clickhouse';
import type { PositionedEvent } from '../model/fact-rows.ts';
import { UserMemory } from '../model/tsv-batch.ts';
import { ProjectionSupersededError } from '../errors.ts';
import { PROJECTION_VERSION } from '../version.ts';
import { storedVersion } from '../schema/analytics-schema.ts';
import type { SwapLock } from './swap-lock.ts';
import { writeFacts } from './write-facts.ts';

interface Pending {
  readonly event: PositionedEvent;
  resolve(): void;
}

export interface FlusherOptions {
  readonly ch: ClickHouse;
  readonly lock: SwapLock;
  readonly logger: Logger;
  readonly maxRows?: number;
  /** Default 500: a longer window holds more events into V8's old generation (peak RSS; README). */
  readonly maxDelayMs?: number;
  /** Flush once no event arrived for this long. Default 200; 0: only `maxRows` and `maxDelayMs`. */
  readonly quietMs?: number;
  readonly backoff?: { initialMs?: number; maxMs?: number };
  /** Called once when a replay swapped in a newer version: stop the service. */
  readonly onSuperseded?: (err: ProjectionSupersededError) => void;
}

export interface FlusherStats {
  readonly flushes: number;
  readonly inserted: number;
  readonly skipped: number;
  /** Page events already stored under another position (re-emitted), left out. */
  readonly duplicates: number;
  readonly failures: number;
  readonly waiting: number;
  readonly lastError: string | null;
}

export class Flusher {
  private buffer: Pending[] = [];
  private timer: NodeJS.Timeout | undefined;
  private flushing: Promise<void> | undefined;
  private readonly users = new UserMemory();
  private readonly abort = new AbortController();
  private superseded = false;
  private readonly maxRows: number;
  private readonly maxDelayMs: number;
  private readonly quietMs: number;
  private lastAddAt = 0;
  private quietTimer: NodeJS.Timeout | undefined;
  /** A job ended since the last flush began: flush as soon as the one running is stored. */
  private jobEnded = false;
  private endTimer: NodeJS.Immediate | undefined;
  private stats_ = { flushes: 0, inserted: 0, skipped: 0, duplicates: 0, failures: 0, lastError: null as string | null };

  constructor(private readonly o: FlusherOptions) {
    this.maxRows = o.maxRows ?? 20_000;
    this.maxDelayMs = o.maxDelayMs ?? 500;
    this.quietMs = o.quietMs ?? 200;
  }

  /** Queues an event; resolves once it is stored (or was already). */
  add(event: PositionedEvent): Promise<void> {
    return new Promise<void>((resolve) => {
      this.buffer.push({ event, resolve });
      if (event.name === 'JobCompleted' || event.name === 'JobFailed') {
        this.jobEnded = true;
        this.kickAfterThisTurn();
      }
      if (this.buffer.length >= this.maxRows) this.kick();
      else {
        this.timer ??= setTimeout(() => this.kick(), this.maxDelayMs);
        if (this.quietMs > 0) {
          this.lastAddAt = performance.now();
          this.quietTimer ??= setTimeout(() => this.whenQuiet(), this.quietMs);
        }
      }
    });
  }

  /** One timer per quiet period, not per event: it looks at the time of the last add and waits on if need be. */
  private whenQuiet(): void {
    this.quietTimer = undefined;
    if (this.buffer.length === 0) return;
    const quietFor = performance.now() - this.lastAddAt;
    if (quietFor >= this.quietMs) this.kick();
    else this.quietTimer = setTimeout(() => this.whenQuiet(), this.quietMs - quietFor);
  }

  private kickAfterThisTurn(): void {
    this.endTimer ??= setImmediate(() => {
      this.endTimer = undefined;
      this.kick();
    });
  }

  stats(): FlusherStats {
    return { ...this.stats_, waiting: this.buffer.length };
  }

  private kick(): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = undefined;
    if (this.flushing || this.buffer.length === 0 || this.abort.signal.aborted || this.superseded) return;
    const batch = this.buffer.splice(0, this.maxRows);
    this.jobEnded = false;
    this.flushing = this.flush(batch).finally(() => {
      this.flushing = undefined;
      if (this.abort.signal.aborted) return; // closed: no new timers
      // What queued meanwhile goes at once if it is a full batch or ends a job, else on its own timer.
      if (this.buffer.length >= this.maxRows) this.kick();
      else if (this.jobEnded) this.kickAfterThisTurn();
      else if (this.buffer.length > 0) {
        this.timer ??= setTimeout(() => this.kick(), this.maxDelayMs);
        // Gone quiet while this flush ran? Then what came meanwhile goes now.
        if (this.quietMs > 0) this.quietTimer ??= setTimeout(() => this.whenQuiet(), 0);
      }
    });
  }

  private async flush(batch: Pending[]): Promise<void> {
    const backoff = new Backoff({ initialMs: 200, maxMs: 30_000, ...this.o.backoff });
    const events = batch.map((p) => p.event);
    for (;;) {
      if (this.abort.signal.aborted) return;
      try {
        const result = await this.o.lock.withShared(async () => {
          const version = await storedVersion(this.o.ch);
          if (version !== PROJECTION_VERSION) {
            throw new ProjectionSupersededError(`the analytics tables are now version ${version}; this projector writes version ${PROJECTION_VERSION}`);
          }
          return writeFacts(this.o.ch, events, this.users, { skipStored: true });
        });
        this.stats_.flushes++;
        this.stats_.inserted += result.inserted;
        this.stats_.skipped += result.skipped;
        this.stats_.duplicates += result.duplicates;
        if (backoff.failures > 0) this.o.logger.info({ failures: backoff.failures, events: events.length }, 'ClickHouse flush succeeded again; catching up');
        batch.forEach((p) => p.resolve());
        return;
      } catch (err) {
        if (err instanceof ProjectionSupersededError) {
          this.superseded = true;
          this.o.logger.fatal({ err }, 'a newer analytics version was swapped in; not writing any more');
          this.o.onSuperseded?.(err);
          return;
        }
        this.stats_.failures++;
        this.stats_.lastError = (err as Error).message;
        const delay = backoff.next();
        const log = backoff.failures > 5 ? this.o.logger.error.bind(this.o.logger) : this.o.logger.warn.bind(this.o.logger);
        log({ err, events: events.length, retryInMs: delay }, 'ClickHouse flush failed; retrying the same batch');
        await sleep(delay, this.abort.signal);
      }
    }
  }

  /** Flushes what is buffered (waiting for the database if need be, until close()). */
  async drain(): Promise<void> {
    while (this.flushing || this.buffer.length > 0) {
      if (this.abort.signal.aborted || this.superseded) return;
      if (!this.flushing) this.kick();
      await this.flushing;
    }
  }

  /** Stops retrying; events not stored stay unacknowledged and are delivered again later. */
  close(): void {
    if (this.timer) clearTimeout(this.timer);
    if (this.quietTimer) clearTimeout(this.quietTimer);
    if (this.endTimer) clearImmediate(this.endTimer);
    this.abort.abort();
  }
}
