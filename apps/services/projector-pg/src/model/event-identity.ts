/**
 * Event identity: the one rule that decides which events a read model applies, shared by the live
 * planner (plan-batch.ts) and the replay's bulk settle (replay/bulk-build.ts), so the two cannot
 * drift apart.
 *
 * An event id is the event. Producers derive an event's id from what identifies it wherever a
 * retry could emit it again (a worker killed after producing fetches the page again; a frontier
 * restarted re-emits its JobCompleted), so the log can hold several copies of one event: the same
 * id at another offset, with a later occurred_at, even with other figures (the page was fetched
 * again). The first copy in log order is the event; every later copy changes nothing: no row, no
 * counter, no first_page_at or updated_at, no log line.
 *
 * Log order between copies is well defined because a copy carries the event's key (the job id)
 * and so lands in the same partition, at a higher offset. The live projector reads a partition in
 * offset order, batch after batch, and hands the planner each batch in that order; the replay
 * reads the same way and settles set-wise by (partition, offset). Nothing may pick between copies
 * by event time: a copy's occurred_at is the clock of whichever process emitted it again, which
 * can even be behind the first one's.
 *
 * Items: an ItemExtracted's id is derived from its job and item key (the worker's
 * itemExtractedEvents), so the key names the event as exactly as the id does, and the key is what
 * the stored row is found by. Their identity is therefore (job id, item key): the first
 * extraction of a key is the item.
 *
 * Past identity nothing depends on order: the distinct events fold commutatively (job-row.ts,
 * page-row.ts), so the tables are a function of the set of first copies, however the three topics
 * interleave and however they are batched.
 */
import type { EventMap } from '@trawl/schemas';
import type { ProjectableEvent } from './projectable-event.ts';
import { itemKey } from './item-row.ts';

/** What names an event for the read models: its id, or for an item its job and key (see above). */
export function identityOf(e: ProjectableEvent): string {
  if (e.name === 'ItemExtracted') {
    const v = e.value as EventMap['ItemExtracted'];
    return `item\u0000${itemKey(v.job_id, v.item_key)}`;
  }
  return e.value.event_id;
}

export interface FirstOccurrences<E> {
  /** The first copy of each event, in the order given. */
  readonly first: E[];
  /** Later copies left out, and copies of events `known` already. */
  readonly copies: number;
}

/**
 * The first copy of each event of `events`, which must be in log order within each partition (as
 * a consumer or a range reader hands them over), leaving out the events `known` says were applied
 * before (stored state, or what an earlier batch of the same reader saw).
 */
export function firstOccurrences<E extends ProjectableEvent>(events: readonly E[], known: (e: E, identity: string) => boolean): FirstOccurrences<E> {
  const seen = new Set<string>();
  const first: E[] = [];
  for (const e of events) {
    const id = identityOf(e);
    if (seen.has(id) || known(e, id)) continue;
    seen.add(id);
    first.push(e);
  }
  return { first, copies: events.length - first.length };
}

/** The columns that hold an event's place in the log, on the replay's stage rows. */
export const LOG_POSITION_COLUMNS = ['log_partition', 'log_offset'] as const;

/**
 * The columns that hold an event's identity, per stage table: the SQL form of identityOf. An
 * event id is derived from its job id — and a page event's from its fetch id too — by every
 * producer, so the id and those columns name the same event; leading with them lets the settle's
 * later sorts (by fetch, by job) reuse this one's order. A log whose id came under two jobs breaks
 * that derivation: the replay then keeps both and fails on job_log's unique event_id, naming them.
 */
export const IDENTITY_COLUMNS = {
  pages: ['job_id', 'fetch_id', 'event_id'],
  log: ['job_id', 'event_id'],
  items: ['job_id', 'item_key'],
} as const satisfies Record<string, readonly string[]>;

/**
 * The SQL form of firstOccurrences, for the replay's set-wise settle: the rows of `from` that are
 * first copies (per identity, the lowest log position), with the given select list. Identities
 * compare bytewise (COLLATE "C"), as the live planner's strings do.
 */
export function firstOccurrencesSql(from: string, identity: readonly string[], select: string): string {
  const id = identity.map((c) => `"${c}" COLLATE "C"`).join(', ');
  const position = LOG_POSITION_COLUMNS.map((c) => `"${c}"`).join(', ');
  return `SELECT DISTINCT ON (${id}) ${select} FROM ${from} ORDER BY ${id}, ${position}`;
}
