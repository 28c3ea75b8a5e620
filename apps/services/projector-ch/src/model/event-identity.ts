/**
 * Event identity in the analytics, the rule of the Postgres read models (projector-pg's
 * event-identity.ts) within a window: an event id is the event; the first copy in log order is the
 * fact, and a later copy — a worker that fetched a page again after a crash re-emits its
 * deterministic id, at a new offset, with a later time and other figures — is left out of every
 * fact table. So the rollups, which count every row inserted, never count an event twice (not even
 * in two different minutes), and a fact query never has to choose between two copies.
 *
 * Copies share their key (the job id), hence their partition, where the lower offset is the first.
 * ClickHouse keeps no index by event id (the facts are sorted by position), so the check looks back
 * `DEDUPE_WINDOW` offsets of the same partition from each event: a copy further back than that is
 * stored a second time. The window is measured from each event, not from a batch, so whether an
 * event is a copy never depends on how the events were batched: the live projector's flushes and
 * the replay's chunks decide alike, and a replay rebuilds the very rows of the live tables.
 *
 * The position check is apart (positions.ts): the same position delivered again is a redelivery,
 * not a copy, and is never written twice whatever the window.
 */
import type { PositionedEvent } from './fact-rows.ts';

/** Offsets of a partition within which an event written again is recognised (~13 min of a 130 pages/s crawl on one partition). */
export const DEDUPE_WINDOW = 100_000n;

/** The highest offset at which an event id was kept in a partition of one fact table, if known. */
export type KeptAt = (partition: number, id: string) => bigint | undefined;

export const eventIdOf = (e: Pick<PositionedEvent, 'value'>): string => (e.value as { event_id: string }).event_id;

/**
 * Of events bound for one fact table, in log order within each partition, those that are first
 * copies: no copy of the same id kept (before this batch, per `keptAt`, or earlier in it) in the
 * same partition within `window` offsets before it.
 */
export function firstCopies<E extends Pick<PositionedEvent, 'partition' | 'offset' | 'value'>>(events: readonly E[], keptAt: KeptAt, window: bigint = DEDUPE_WINDOW): E[] {
  // Per partition, id → offset kept in this batch (no key strings to build per event).
  const kept = new Map<number, Map<string, bigint>>();
  return events.filter((e) => {
    const id = eventIdOf(e);
    let inPartition = kept.get(e.partition);
    if (!inPartition) kept.set(e.partition, (inPartition = new Map()));
    const before = inPartition.get(id) ?? keptAt(e.partition, id);
    if (before !== undefined && before >= e.offset - window) return false;
    inPartition.set(id, e.offset);
    return true;
  });
}
