/**
 * One row per item (job id + item key; the key is stable for the same item on the same page).
 * Seen again (the page was fetched again), the later extraction wins and the count stays.
 */
import type { ItemExtracted } from '@trawl/schemas';
import { laterThan } from './job-row.ts';

export interface ItemRow {
  job_id: string;
  item_key: string;
  fetch_id: string;
  url: string;
  fields: Readonly<Record<string, string>>;
  extracted_at: Date;
  event_id: string;
}

/** What must be known of a stored item to decide whether a new extraction replaces it. */
export interface ItemVersion {
  readonly extracted_at: Date;
  readonly event_id: string;
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
  };
}

export function replacesItem(existing: ItemVersion | undefined, candidate: ItemVersion): boolean {
  return !existing || laterThan(candidate.extracted_at, candidate.event_id, existing.extracted_at, existing.event_id);
}
