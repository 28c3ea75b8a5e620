/**
 * The replay's writer into its shadow database: events become TabSeparated rows as they are
 * read, a chunk of about a thousand at a time, and the rows go to ClickHouse in large inserts
 * (`eventsPerInsert` events' worth; ClickHouse wants few, large inserts: each one is a part and a
 * run of every view), one insert at a time while the next one fills.
 *
 * Why rows at once and not events held until the insert: a decoded event is a dozen objects, and
 * tens of thousands of them held for a second outlive V8's young generation, whose collections
 * copy every survivor — most of the replay's CPU went there. A row is one string, and a chunk's
 * rows are joined into one, which the collector does not copy.
 *
 * The checks of `writeFacts` apply, answered without asking ClickHouse: the shadow starts empty
 * (or with the facts a replay from a time copied, which `EventIdMemory.load` learnt) and this is
 * its only writer, in offset order. An event whose id was kept within the window before it (or
 * earlier in the chunk) is left out (event-identity.ts); positions are never written twice, except
 * by an insert that failed yet landed, which is why a retried insert first asks which of its
 * positions are stored.
 */
import { Backoff, sleep, type Logger } from '@trawl/streams';
import type { ClickHouse } from '@trawl/clickhouse';
import { FACT_COLUMNS, FACT_TABLES, type FactTable, type PositionedEvent } from '../model/fact-rows.ts';
import { tableOf, tsvBatch, type UserMemory } from '../model/tsv-batch.ts';
import { positionKey, storedPositions } from '../projector/positions.ts';
import { eventIdOf, firstCopies } from '../model/event-identity.ts';
import { TrawlError } from '@trawl/schemas';
import type { EventIdMemory } from '../projector/event-id-memory.ts';

/** Rows waiting for one insert: the TabSeparated bodies of its chunks and each row's position. */
interface PendingTable {
  bodies: string[];
  rows: number;
  partitions: number[];
  /** Numbers, not bigints: an array of numbers holds no objects for the collector to copy. */
  offsets: number[];
}

const emptyTables = (): Record<FactTable, PendingTable> => ({
  job_events: { bodies: [], rows: 0, partitions: [], offsets: [] },
  page_fetches: { bodies: [], rows: 0, partitions: [], offsets: [] },
  items: { bodies: [], rows: 0, partitions: [], offsets: [] },
});

export interface ShadowWriterOptions {
  readonly shadow: ClickHouse;
  readonly users: UserMemory;
  /** Per fact table: the ids kept within the window (a partition number names another partition in each table's topic). */
  readonly eventIds: Readonly<Record<FactTable, EventIdMemory>>;
  readonly logger: Logger;
  /** Events per insert (their rows, once the events the analytics do not keep are left out). */
  readonly eventsPerInsert: number;
  /** Attempts of an insert before the replay gives up. Default 8. */
  readonly attempts?: number;
}

export interface ShadowWriterStats {
  readonly inserted: number;
  readonly duplicates: number;
}

export class ShadowWriter {
  private pending = emptyTables();
  private pendingEvents = 0;
  /** The insert running, if any; inserts run one at a time, in order. */
  private running: Promise<void> = Promise.resolve();
  private failure: unknown;
  private inserted = 0;
  private duplicates = 0;
  private readonly closed = new AbortController();

  constructor(private readonly o: ShadowWriterOptions) {}

  /**
   * Turns a chunk of events (in log order per partition) into rows now. Resolves at once, or,
   * when an insert's worth waits and the previous insert still runs, once that one is stored.
   */
  async add(events: readonly PositionedEvent[]): Promise<void> {
    this.throwIfFailed();
    this.o.users.learn(events);
    const byTable: Record<FactTable, PositionedEvent[]> = { job_events: [], page_fetches: [], items: [] };
    for (const e of events) {
      const table = tableOf(e.name);
      if (table) byTable[table].push(e);
    }
    const kept: PositionedEvent[] = [];
    for (const table of FACT_TABLES) {
      const list = byTable[table];
      if (list.length === 0) continue;
      const memory = this.o.eventIds[table];
      const first = firstCopies(list, memory.keptAt(list), memory.window);
      this.duplicates += list.length - first.length;
      for (const e of first) {
        memory.add(e.partition, e.offset, eventIdOf(e));
        kept.push(e);
      }
    }

    const batch = tsvBatch(kept, this.o.users);
    for (const e of kept) {
      const table = tableOf(e.name);
      if (!table) continue;
      this.pending[table].partitions.push(e.partition);
      this.pending[table].offsets.push(Number(e.offset));
    }
    for (const table of FACT_TABLES) {
      if (batch.rows[table] === 0) continue;
      this.pending[table].bodies.push(batch.bodies[table]);
      this.pending[table].rows += batch.rows[table];
    }
    this.pendingEvents += events.length;
    if (this.pendingEvents >= this.o.eventsPerInsert) {
      await this.running;
      this.throwIfFailed();
      this.startInsert();
    }
  }

  /** Inserts what waits and resolves once everything added is stored. */
  async flush(): Promise<ShadowWriterStats> {
    await this.running;
    this.throwIfFailed();
    this.startInsert();
    await this.running;
    this.throwIfFailed();
    return { inserted: this.inserted, duplicates: this.duplicates };
  }

  /** Stops retrying and waits for the insert in flight, if any (a replay that failed elsewhere). */
  async close(): Promise<void> {
    this.closed.abort();
    await this.running;
  }

  private throwIfFailed(): void {
    if (this.failure !== undefined) throw this.failure;
  }

  private startInsert(): void {
    const tables = this.pending;
    this.pending = emptyTables();
    this.pendingEvents = 0;
    this.running = (async () => {
      // Job events first, as the live projector does.
      for (const table of FACT_TABLES) if (tables[table].rows > 0) await this.insertWithRetry(table, tables[table]);
    })().catch((err: unknown) => {
      this.failure ??= err;
    });
  }

  private async insertWithRetry(table: FactTable, rows: PendingTable): Promise<void> {
    const backoff = new Backoff({ initialMs: 200, maxMs: 5_000 });
    const attempts = this.o.attempts ?? 8;
    const all = rows.bodies.join('');
    for (let attempt = 1; ; attempt++) {
      try {
        const body = attempt === 1 ? all : await this.unstored(table, rows, all);
        if (body) await this.o.shadow.insertTsv(table, FACT_COLUMNS[table], body);
        this.inserted += rows.rows;
        return;
      } catch (err) {
        if (!(err instanceof TrawlError) || !err.retriable || attempt >= attempts || this.closed.signal.aborted) throw err;
        const delay = backoff.next();
        this.o.logger.warn({ err, table, attempt, retryInMs: delay }, 'shadow insert failed; retrying with a position check');
        await sleep(delay, this.closed.signal);
        if (this.closed.signal.aborted) throw err;
      }
    }
  }

  /** The rows of `body` whose positions the shadow does not hold (a failed insert may have landed). */
  private async unstored(table: FactTable, rows: PendingTable, body: string): Promise<string> {
    const positions = rows.partitions.map((partition, i) => ({ partition, offset: BigInt(rows.offsets[i]!) }));
    const stored = await storedPositions(this.o.shadow, table, positions);
    if (stored.size === 0) return body;
    // One line per row, in the order of the positions (TabSeparated escapes every newline in a value).
    const lines = body.split('\n');
    return positions.map((p, i) => (stored.has(positionKey(p.partition, p.offset)) ? '' : `${lines[i]}\n`)).join('');
  }
}
