/**
 * Delivery counting for a consumer group, made by the group-member runtime for the members that
 * count (the parallel consumer and the projections; group-member.ts): what a re-read message's
 * deliveries were (delivery-store.ts), the verdict on it (delivery-verdict.ts),
 * and the turns counted deliveries take, suspects one at a time and alone among counted ones.
 *
 * Only re-reads touch Postgres, so a consumer that is never restarted never connects: the pool is
 * made on first use (or one is shared: a projection's own). Reads and writes asked for in the same
 * turn of the event loop share one statement — a restarted worker re-reads up to a window of
 * messages per partition, started dozens at a time. A write must be acknowledged before its
 * handler runs (a crash leaves no chance after), so a Postgres outage holds re-reads until it
 * ends, with backoff; forgetting a row is best effort (a row left behind only makes its message a
 * suspect if it is ever re-read, and rows below the commit are removed when the partition is next
 * taken on).
 */
import pg from 'pg';
import type { Logger } from 'pino';
import { endpoints } from '@trawl/base';
import { InvalidOptionError } from '../errors.ts';
import { Backoff, sleep, type BackoffOptions } from '../util/backoff.ts';
import {
  deleteDeliveries,
  deleteDeliveriesBelow,
  ensureDeliveriesTable,
  readDeliveries,
  writeDeliveries,
  type MessagePosition,
  type RecordedDeliveries,
} from './delivery-store.ts';
import { DEFAULT_MAX_DELIVERIES, MIN_MAX_DELIVERIES } from './delivery-verdict.ts';

export interface DeliveryCounterOptions {
  /** The consumer group (or projection) the counts belong to. */
  readonly groupId: string;
  readonly maxDeliveries: number;
  /** A pool to share (not closed here); else one of two connections is made on first use. */
  readonly pool?: pg.Pool;
  /** Default DATABASE_URL (endpoints()). */
  readonly databaseUrl?: string;
  readonly logger: Logger;
  readonly backoff?: BackoffOptions;
}

/** TRAWL_MAX_DELIVERIES (default 3, at least 2), unless an option says otherwise. */
export function maxDeliveriesOf(option: number | undefined, env: NodeJS.ProcessEnv = process.env): number {
  const raw = env.TRAWL_MAX_DELIVERIES;
  const value = option ?? (raw === undefined || raw === '' ? DEFAULT_MAX_DELIVERIES : Number(raw));
  if (!Number.isSafeInteger(value) || value < MIN_MAX_DELIVERIES) {
    throw new InvalidOptionError(
      `maxDeliveries must be an integer ≥ ${MIN_MAX_DELIVERIES} (a re-read counts as a second delivery), got ${option ?? `TRAWL_MAX_DELIVERIES=${raw}`}`,
    );
  }
  return value;
}

interface Request<I, O> {
  readonly item: I;
  resolve(value: O | undefined): void;
}

/** Items asked for in one turn of the event loop go to `run` together; retried with backoff until it succeeds or the counter closes. */
class TurnBatch<I, O> {
  private pending: Request<I, O>[] = [];
  private scheduled = false;

  constructor(
    private readonly run: (items: I[]) => Promise<O[]>,
    private readonly retry: (what: string, work: () => Promise<O[]>) => Promise<O[] | undefined>,
    private readonly what: string,
  ) {}

  /** Resolves with the item's result, or undefined when the counter closed first. */
  add(item: I): Promise<O | undefined> {
    return new Promise((resolve) => {
      this.pending.push({ item, resolve });
      if (this.scheduled) return;
      this.scheduled = true;
      setImmediate(() => void this.flush());
    });
  }

  private async flush(): Promise<void> {
    this.scheduled = false;
    const batch = this.pending.splice(0);
    const results = await this.retry(this.what, () => this.run(batch.map((r) => r.item)));
    batch.forEach((r, i) => r.resolve(results?.[i]));
  }
}

/** `work`'s result, or undefined as soon as `signal` aborts. */
function orAbort<T>(work: Promise<T>, signal: AbortSignal | undefined): Promise<T | undefined> {
  if (!signal) return work;
  if (signal.aborted) return Promise.resolve(undefined);
  return new Promise((resolve) => {
    const abort = () => resolve(undefined);
    signal.addEventListener('abort', abort, { once: true });
    void work.then((value) => {
      signal.removeEventListener('abort', abort);
      resolve(value);
    });
  });
}

const key = (p: MessagePosition) => `${p.topic}\u0000${p.partition}\u0000${p.offset}`;

export class DeliveryCounter {
  readonly max: number;
  private pool: pg.Pool | undefined;
  private readonly ownsPool: boolean;
  private tableReady: Promise<void> | undefined;
  private closed = false;
  private readonly waiting: { readonly exclusive: boolean; grant(): void }[] = [];
  private sharedRunning = 0;
  private exclusiveRunning = false;
  private forgetting: MessagePosition[] = [];
  private forgetTimer: NodeJS.Timeout | undefined;
  private readonly reads: TurnBatch<MessagePosition, number | null>;
  private readonly writes: TurnBatch<RecordedDeliveries, true>;

  constructor(private readonly o: DeliveryCounterOptions) {
    this.max = o.maxDeliveries;
    this.pool = o.pool;
    this.ownsPool = !o.pool;
    const retry = <O>(what: string, work: () => Promise<O[]>) => this.untilDone(what, work);
    this.reads = new TurnBatch(
      async (at) => {
        const found = new Map((await readDeliveries(await this.db(), this.o.groupId, at)).map((r) => [key(r), r.deliveries]));
        return at.map((p) => found.get(key(p)) ?? null);
      },
      retry,
      'read deliveries',
    );
    this.writes = new TurnBatch(
      async (entries) => {
        // One row per message: the last value asked for wins (a message is recorded once per delivery).
        const latest = new Map(entries.map((e) => [key(e), e]));
        await writeDeliveries(await this.db(), this.o.groupId, [...latest.values()]);
        return entries.map(() => true as const);
      },
      retry,
      'record deliveries',
    );
  }

  /** Deliveries recorded for the message; undefined when none are (or `signal` aborted, or the counter closed, first). */
  async recorded(at: MessagePosition, signal?: AbortSignal): Promise<number | undefined> {
    return (await orAbort(this.reads.add(at), signal)) ?? undefined;
  }

  /** Records the message's deliveries, this one included, before it runs; false when `signal` aborted or the counter closed first. */
  async record(at: MessagePosition, deliveries: number, signal?: AbortSignal): Promise<boolean> {
    return (await orAbort(this.writes.add({ ...at, deliveries }), signal)) === true;
  }

  /** The message has an outcome: its row goes (in the background, batched). */
  forget(at: MessagePosition): void {
    this.forgetting.push(at);
    this.forgetTimer ??= setTimeout(() => void this.flushForgotten(), 50);
  }

  /** A partition taken on at `committed`: rows below it are stale (best effort, in the background). */
  forgetBelow(topic: string, partition: number, committed: bigint): void {
    if (this.closed) return;
    void this.db()
      .then((db) => deleteDeliveriesBelow(db, this.o.groupId, topic, partition, committed))
      .catch((err: unknown) => this.o.logger.debug({ err, topic, partition }, 'could not remove stale delivery counts'));
  }

  /**
   * Forgets the message now, retrying until Postgres takes it (or the counter closes): a suspect's
   * outcome must be durable before the next suspect runs, or the next death would count against
   * a message that had finished.
   */
  async forgetNow(at: MessagePosition): Promise<void> {
    await this.untilDone('forget a delivery count', async () => {
      await deleteDeliveries(await this.db(), this.o.groupId, [at]);
      return [];
    });
  }

  /**
   * Waits for a counted delivery's turn; call the returned function once its outcome is durable.
   * A suspect (`exclusive`) runs when no other counted delivery of this consumer runs, and none
   * starts while it does: if the process dies meanwhile, the suspect is the one message it can be
   * counted against with certainty (a first delivery beside it would have to be a second culprit).
   * Other counted deliveries share their turns. Turns are granted in the order asked for.
   */
  turn(exclusive: boolean): Promise<() => void> {
    return new Promise((resolve) => {
      this.waiting.push({ exclusive, grant: () => resolve(() => this.leave(exclusive)) });
      this.grant();
    });
  }

  private leave(exclusive: boolean): void {
    if (exclusive) this.exclusiveRunning = false;
    else this.sharedRunning -= 1;
    this.grant();
  }

  private grant(): void {
    while (this.waiting.length > 0 && !this.exclusiveRunning) {
      const next = this.waiting[0]!;
      if (next.exclusive) {
        if (this.sharedRunning > 0) return;
        this.exclusiveRunning = true;
      } else {
        this.sharedRunning += 1;
      }
      this.waiting.shift();
      next.grant();
    }
  }

  async close(): Promise<void> {
    if (this.forgetTimer) clearTimeout(this.forgetTimer);
    await this.flushForgotten();
    this.closed = true;
    if (this.ownsPool && this.pool) await this.pool.end().catch(() => undefined);
  }

  private async flushForgotten(): Promise<void> {
    this.forgetTimer = undefined;
    const at = this.forgetting.splice(0);
    if (at.length === 0 || this.closed) return;
    try {
      await deleteDeliveries(await this.db(), this.o.groupId, at);
    } catch (err) {
      this.o.logger.debug({ err, messages: at.length }, 'could not forget delivery counts; they go when the partition is next taken on');
    }
  }

  private async db(): Promise<pg.Pool> {
    if (!this.pool) {
      this.pool = new pg.Pool({ connectionString: this.o.databaseUrl ?? endpoints().databaseUrl, max: 2, connectionTimeoutMillis: 5_000, application_name: 'trawl-deliveries' });
      // An idle client whose server went away emits 'error' on the pool; the next query fails and is retried.
      this.pool.on('error', (err) => this.o.logger.warn({ err }, 'idle Postgres client of the delivery counter failed'));
    }
    const pool = this.pool;
    this.tableReady ??= ensureDeliveriesTable(pool).catch((err: unknown) => {
      this.tableReady = undefined;
      throw err;
    });
    await this.tableReady;
    return pool;
  }

  private async untilDone<O>(what: string, work: () => Promise<O[]>): Promise<O[] | undefined> {
    let backoff: Backoff | undefined;
    for (;;) {
      if (this.closed) return undefined;
      try {
        return await work();
      } catch (err) {
        const delay = (backoff ??= new Backoff(this.o.backoff ?? { initialMs: 200, maxMs: 10_000 })).next();
        this.o.logger.warn({ err, retryInMs: delay }, `cannot ${what} (Postgres?); re-read messages wait`);
        await sleep(delay);
      }
    }
  }
}
