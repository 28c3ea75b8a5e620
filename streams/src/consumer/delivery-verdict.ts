/**
 * When a message has been delivered too often without an outcome. Pure: the consumer runtimes ask,
 * then do the I/O (the count recorded in Postgres before the handler runs, the dead letter).
 *
 * A delivery without an outcome is one whose handler neither resolved nor failed: its process died
 * (process.exit, out of memory, a watchdog's SIGKILL) or it overran its budget. The first delivery
 * of a message at its position is not recorded — recording it would cost a write per message on the
 * hot path. A re-read (a message a restarted member reads again past its group's commit) is: if
 * nothing is recorded for it, its previous delivery is assumed to have ended with its process, so a
 * message that crashes its consumer is poison after exactly `max` deliveries. (A re-read that was
 * accepted but never started before the crash is counted one delivery it did not have.)
 *
 * Attribution: when a process dies, every message running in it loses its delivery, not only the
 * culprit. A re-read that was already running during an earlier death (two or more deliveries
 * without an outcome here) is a suspect, and suspects run one at a time: when the process dies
 * again, the one suspect running is the one it counts against. Innocent messages that happened to
 * run beside the culprit twice get through on their turn alone.
 */

export interface DeliveryHistory {
  /** Deliveries without an outcome carried from earlier positions (retry tiers, in a header). */
  readonly carried: number;
  /** Deliveries without an outcome at this position before the current one. */
  readonly here: number;
}

export type DeliveryVerdict =
  /** Delivered `max` times without an outcome: dead-letter it as poison, do not run it. */
  | { readonly kind: 'poison'; readonly unfinished: number }
  /**
   * Run it, after recording `record` deliveries at this position (this one included); `isolated`:
   * run it as the only suspect of its consumer at that moment.
   */
  | { readonly kind: 'run'; readonly isolated: boolean; readonly record: number };

/** A first delivery at a position: nothing recorded, nothing to record. */
export const FIRST_DELIVERY = (carried: number): DeliveryHistory => ({ carried, here: 0 });

/**
 * The history of a re-read: the deliveries recorded at its position, or — when none were — the one
 * delivery before the crash that made it a re-read.
 */
export function rereadHistory(carried: number, recorded: number | undefined): DeliveryHistory {
  return { carried, here: recorded ?? 1 };
}

/** What to do with a delivery about to start. */
export function deliveryVerdict(history: DeliveryHistory, max: number): DeliveryVerdict {
  const unfinished = history.carried + history.here;
  if (unfinished >= max) return { kind: 'poison', unfinished };
  return { kind: 'run', isolated: history.here >= 2, record: history.here + 1 };
}

export type UnfinishedVerdict =
  | { readonly kind: 'poison'; readonly unfinished: number }
  /** Retry it (next tier, or in place); `unfinished` is what it carries, `history` its new history here. */
  | { readonly kind: 'retry'; readonly unfinished: number; readonly history: DeliveryHistory };

/** The current delivery ended without an outcome (it overran its budget): poison, or one more try. */
export function afterUnfinished(history: DeliveryHistory, max: number): UnfinishedVerdict {
  const here = history.here + 1;
  const unfinished = history.carried + here;
  if (unfinished >= max) return { kind: 'poison', unfinished };
  return { kind: 'retry', unfinished, history: { carried: history.carried, here } };
}

/** What a message forwarded to a retry tier after a failure (an outcome) carries. */
export function carriedForward(history: DeliveryHistory): number {
  return history.carried + history.here;
}

/** The bounds of TRAWL_MAX_DELIVERIES: a re-read counts as a second delivery, so 1 would poison every re-read. */
export const MIN_MAX_DELIVERIES = 2;
export const DEFAULT_MAX_DELIVERIES = 3;
