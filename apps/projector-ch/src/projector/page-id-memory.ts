/**
 * The page event ids a replay has written to its shadow tables, per partition, for the last
 * `window` offsets: the answer to "is this event id stored within the window?" without asking
 * ClickHouse. Only a writer that is the sole writer of its tables, in offset order per partition,
 * can answer so — a replay into its shadow database. The live projector shares its tables with
 * replays and restarts, so it asks ClickHouse (`storedCopies`).
 *
 * It answers as `storedCopies` does: an id counts as stored when written in one of the batch's
 * partitions at an offset from `window` before the batch's lowest offset there, or later.
 */
import type { ClickHouse } from '../clickhouse/http-client.ts';
import { ident, uint } from '../clickhouse/sql-text.ts';

interface PartitionIds {
  /** Event id → the highest offset it was written at. */
  readonly offsets: Map<string, number>;
  /** Written ids in offset order, for eviction: offsets[head..] and ids[head..] are live. */
  queueOffsets: number[];
  queueIds: string[];
  head: number;
}

export class PageIdMemory {
  private readonly partitions = new Map<number, PartitionIds>();

  constructor(private readonly window: bigint) {}

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
   * A test for the events of one batch: was an id written in one of the batch's partitions,
   * within the window before the batch's lowest offset there? (Copies within the batch are the
   * caller's to find.)
   */
  storedIn(events: readonly { readonly partition: number; readonly offset: bigint }[]): (id: string) => boolean {
    const lowest = new Map<number, bigint>();
    for (const e of events) {
      const lo = lowest.get(e.partition);
      if (lo === undefined || e.offset < lo) lowest.set(e.partition, e.offset);
    }
    const windows: { offsets: Map<string, number>; floor: number }[] = [];
    for (const [p, lo] of lowest) {
      const state = this.partitions.get(p);
      if (!state) continue;
      this.evict(state, lo);
      windows.push({ offsets: state.offsets, floor: Number(lo - this.window) });
    }
    return (id) => {
      for (const w of windows) {
        const at = w.offsets.get(id);
        if (at !== undefined && at >= w.floor) return true;
      }
      return false;
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
