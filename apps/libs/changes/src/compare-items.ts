/**
 * Items of two runs of a schedule, compared: a pure function of the two runs' item rows.
 *
 * An item's key (`item_key`, @trawl/crawl's itemKey) is a hash of its page's URL, its index on the
 * page and its fields, so the same key in both runs is the same item, unchanged. An item is
 * otherwise identified by its page and its position there — the key's own identity without the
 * fields — recovered from the key (`itemIndexOf`):
 *
 * - `changed`: no item of the other run has its key, and the other run has an item at the same
 *   page and position (its fields differ);
 * - `new` / `removed`: only this run / only the previous run has an item at that page and
 *   position (a page that is new or gone brings or takes all its items);
 * - unchanged items are counted, not listed.
 *
 * What this costs: an item that moved on its page (one inserted above it) counts as changed at
 * its old and its new position, as its key changes with its index. A website whose items carry a
 * real id shows it as a field, and a client can match on that. An item whose position cannot be
 * recovered (fields cut to fit its event) is new or removed, never changed.
 */
import { itemIndexOf } from '@trawl/crawl';

/** What the comparison needs of a `job_items` row. */
export interface RunItem {
  readonly item_key: string;
  readonly url: string;
  readonly fields: Readonly<Record<string, string>>;
}

export type ItemChangeKind = 'new' | 'changed' | 'removed';

export const ITEM_CHANGE_KINDS: readonly ItemChangeKind[] = ['new', 'changed', 'removed'];

export interface ItemChange {
  readonly kind: ItemChangeKind;
  readonly url: string;
  /** The item's position on its page; null when it could not be recovered. */
  readonly index: number | null;
  /** This run's item; null when removed. */
  readonly item_key: string | null;
  readonly fields: Readonly<Record<string, string>> | null;
  /** The previous run's item; null when new. */
  readonly previous_item_key: string | null;
  readonly previous_fields: Readonly<Record<string, string>> | null;
}

export interface ItemComparison {
  readonly changes: readonly ItemChange[];
  readonly unchanged: number;
}

/** An item's page and position: `url \0 index`, or undefined when the index is unknown. */
type Slot = string;

function slotted(items: readonly RunItem[], indexOf: IndexOf): { bySlot: Map<Slot, RunItem & { index: number }>; loose: RunItem[] } {
  const bySlot = new Map<Slot, RunItem & { index: number }>();
  const loose: RunItem[] = [];
  for (const item of items) {
    const index = indexOf(item);
    const slot = index === null ? undefined : `${item.url}\u0000${index}`;
    // Two items at one slot cannot come from one page fetch; keep the first, list the other loose.
    if (slot === undefined || bySlot.has(slot)) loose.push(item);
    else bySlot.set(slot, { ...item, index: index! });
  }
  return { bySlot, loose };
}

export type IndexOf = (item: RunItem) => number | null;

const recoveredIndex: IndexOf = (item) => itemIndexOf(item.url, item.fields, item.item_key);

function order(a: ItemChange, b: ItemChange): number {
  if (a.url !== b.url) return a.url < b.url ? -1 : 1;
  const ai = a.index ?? Number.MAX_SAFE_INTEGER;
  const bi = b.index ?? Number.MAX_SAFE_INTEGER;
  if (ai !== bi) return ai - bi;
  const ak = a.item_key ?? a.previous_item_key ?? '';
  const bk = b.item_key ?? b.previous_item_key ?? '';
  return ak < bk ? -1 : ak > bk ? 1 : 0;
}

/** `indexOf` is the key's position search; tests may give the positions they built the keys with. */
export function compareItems(previous: readonly RunItem[], current: readonly RunItem[], indexOf: IndexOf = recoveredIndex): ItemComparison {
  const currentKeys = new Set(current.map((i) => i.item_key));
  const previousKeys = new Set(previous.map((i) => i.item_key));
  const unchanged = current.filter((i) => previousKeys.has(i.item_key)).length;
  const before = slotted(previous.filter((i) => !currentKeys.has(i.item_key)), indexOf);
  const now = slotted(current.filter((i) => !previousKeys.has(i.item_key)), indexOf);

  const changes: ItemChange[] = [];
  for (const [slot, c] of now.bySlot) {
    const b = before.bySlot.get(slot);
    if (b) {
      changes.push({ kind: 'changed', url: c.url, index: c.index, item_key: c.item_key, fields: c.fields, previous_item_key: b.item_key, previous_fields: b.fields });
      before.bySlot.delete(slot);
    } else {
      changes.push({ kind: 'new', url: c.url, index: c.index, item_key: c.item_key, fields: c.fields, previous_item_key: null, previous_fields: null });
    }
  }
  for (const c of now.loose) changes.push({ kind: 'new', url: c.url, index: null, item_key: c.item_key, fields: c.fields, previous_item_key: null, previous_fields: null });
  for (const b of before.bySlot.values()) changes.push({ kind: 'removed', url: b.url, index: b.index, item_key: null, fields: null, previous_item_key: b.item_key, previous_fields: b.fields });
  for (const b of before.loose) changes.push({ kind: 'removed', url: b.url, index: null, item_key: null, fields: null, previous_item_key: b.item_key, previous_fields: b.fields });
  return { changes: changes.sort(order), unchanged };
}
