/**
 * The event ids a replay has written to one fact table of its shadow database, per partition, for
 * the last `window` offsets: the answer to "where is this event id kept?" (event-identity.ts)
 * without asking ClickHouse. Only a writer that is the sole writer of its tables, in offset order
 * per partition, can answer so — a replay into its shadow database. The live projector shares its
 * tables with replays and restarts, so it asks ClickHouse (`storedCopies`), and gets the same answer.
 */
import { type ClickHouse, ident, uint } from '@trawl/clickhouse';
import type { KeptAt } from '../model/event-identity.ts';

interface PartitionIds {
  /** Event id → the highest offset it was written at. */
  readonly offsets: Map<string, number>;
  /** Written ids in offset order, for eviction: offsets[head..] and ids[head..] are live. */
  queueOffsets: number[];
  queueIds: string[];
  head: number;
}

export class EventIdMemory {
  private readonly partitions = new Map<number, PartitionIds>();

  constructor(readonly window: bigint) {}

  private partition(p: number): PartitionIds {
    let state = this.partitions.get(p);
    if (!state) this.partitions.set(p, (state = { offsets: new Map(), queueOffsets: [], queueIds: [], head: 0 }));
    return state;
  }

  /** Forgets what lies more than the window before `lowest`, a batch's lowest offset in `partition`. */
  private evict(state: PartitionIds, lowest: bigint): void {
    const floor = Number(lowest - this.window);
    while (state.head < state.queueOffsets.length && state.queueOffsets[state.head]! < floor) {
      const id = state.queueIds[state.head]!;
      if (state.offsets.get(id) === state.queueOffsets[state.head]) state.offsets.delete(id);
      state.head++;
    }
    if (state.head > 4096 && state.head * 2 > state.queueOffsets.length) {
      state.queueOffsets = state.queueOffsets.slice(state.head);
      state.queueIds = state.queueIds.slice(state.head);
      state.head = 0;
    }
  }

  /**
   * Where the ids are kept, for the events of one batch: forgets first what lies more than the
   * window before the batch's lowest offset of each partition (no later event can reach back
   * further). Copies within the batch are the caller's to find (firstCopies).
   */
  keptAt(events: readonly { readonly partition: number; readonly offset: bigint }[]): KeptAt {
    const lowest = new Map<number, bigint>();
    for (const e of events) {
      const lo = lowest.get(e.partition);
      if (lo === undefined || e.offset < lo) lowest.set(e.partition, e.offset);
    }
    for (const [p, lo] of lowest) {
      const state = this.partitions.get(p);
      if (state) this.evict(state, lo);
    }
    return (partition, id) => {
      const at = this.partitions.get(partition)?.offsets.get(id);
      return at === undefined ? undefined : BigInt(at);
    };
  }

  /** Records ids as written (their rows go to the shadow before any row read after them), in offset order per partition. */
  add(partition: number, offset: bigint, id: string): void {
    const state = this.partition(partition);
    const at = Number(offset);
    state.offsets.set(id, Math.max(at, state.offsets.get(id) ?? at));
    state.queueOffsets.push(at);
    state.queueIds.push(id);
  }

  /** Ids held (tests check eviction with it). */
  get size(): number {
    let n = 0;
    for (const s of this.partitions.values()) n += s.offsets.size;
    return n;
  }

  /**
   * Learns what a table already holds before the given start offsets, within the window (a
   * replay from a time copies the older facts into its shadow first).
   */
  async load(ch: ClickHouse, table: string, starts: ReadonlyMap<number, bigint>): Promise<void> {
    if (starts.size === 0) return;
    const where = [...starts].map(([p, o]) => `(_partition = ${uint(p)} AND _offset >= ${uint(o > this.window ? o - this.window : 0n)} AND _offset < ${uint(o)})`).join(' OR ');
    const rows = await ch.rows<{ id: string; p: number; o: string }>(`SELECT event_id AS id, _partition AS p, toString(_offset) AS o FROM ${ident(table)} WHERE ${where} ORDER BY _partition, _offset`);
    for (const r of rows) this.add(Number(r.p), BigInt(r.o), r.id);
  }
}
