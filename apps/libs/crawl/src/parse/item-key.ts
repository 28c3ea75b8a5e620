import { hash } from 'node:crypto';

/**
 * The stable key of an extracted item: SHA-256 of the page URL (the normalised requested URL), the
 * item's index on the page and its fields (sorted by name), hex, first 32 characters (128 bits).
 *
 * Why all three: the same page re-crawled with the same content yields the same keys (so ClickHouse
 * and Postgres dedupe re-deliveries and re-runs); the index keeps two identical-looking items on one
 * page apart; the fields make an edited item a new fact. Cost: an item that only moved position on
 * the page gets a new key. A website with real ids should expose them as a field and dedupe on that.
 */
export function itemKey(pageUrl: string, index: number, fields: Readonly<Record<string, string>>): string {
  // One string, one native call (a streaming Hash made ~15 per item).
  let text = `${pageUrl}\n${index}`;
  for (const name of Object.keys(fields).sort()) text += `\n${name}\u0000${fields[name]!}`;
  return hash('sha256', text, 'hex').slice(0, 32);
}

/**
 * The index on its page of an item with this key, or null when no index below `maxIndex` gives it
 * (its fields were cut to fit an event, or the key was made otherwise). The key is a hash, so this
 * is a search: one hash per index tried, from 0 — cheap for the first items of a page, at most
 * `maxIndex` (the parser's item roots a page, 1,000) hashes. It lets change tracking (apps/libs/
 * changes) tell an item edited in place, same page and position, from one added or removed,
 * without the index travelling in ItemExtracted.
 */
export function itemIndexOf(pageUrl: string, fields: Readonly<Record<string, string>>, key: string, maxIndex = 1_000): number | null {
  let suffix = '';
  for (const name of Object.keys(fields).sort()) suffix += `\n${name}\u0000${fields[name]!}`;
  for (let i = 0; i < maxIndex; i++) {
    if (hash('sha256', `${pageUrl}\n${i}${suffix}`, 'hex').slice(0, 32) === key) return i;
  }
  return null;
}
