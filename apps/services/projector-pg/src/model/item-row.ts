/**
 * One row per item (job id + item key; the key is stable for the same item on the same page).
 * The worker derives an extraction's event id from the job and the key, so a key extracted again
 * (the page fetched again after a crash) is a copy of the same event: the first extraction stands
 * and the count stays (event-identity.ts).
 */
import type { ItemExtracted } from '@trawl/schemas';

export interface ItemRow {
  job_id: string;
  item_key: string;
  fetch_id: string;
  url: string;
  fields: Readonly<Record<string, string>>;
  extracted_at: Date;
  event_id: string;
  /** Why the item fails its transforms or item schema; empty when valid (it is kept either way). */
  errors: readonly string[];
}

export function itemKey(job_id: string, item_key: string): string {
  return `${job_id}\u0000${item_key}`;
}

export function itemFromEvent(e: ItemExtracted): ItemRow {
  return {
    job_id: e.job_id,
    item_key: e.item_key,
    fetch_id: e.fetch_id,
    url: e.url,
    fields: { ...e.fields },
    extracted_at: e.occurred_at,
    event_id: e.event_id,
    errors: [...e.errors],
  };
}
