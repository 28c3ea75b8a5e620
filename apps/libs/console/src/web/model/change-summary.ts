/**
 * What the job view shows of `GET /jobs/:id/changes`: a headline, the counts, and the lists worth
 * reading (changed, new, gone pages; changed, new, removed items), each row plain strings the view
 * puts in as text. Pure, so what the page says is tested without a browser.
 */
import type { ItemChange, JobChanges, PageChange } from '@trawl/client';

export interface ChangeRow {
  readonly url: string;
  readonly detail: string;
  /** The fetch whose content the row can show (this run's, else the previous run's); null: none. */
  readonly fetchId: string | null;
  /** The job that fetch belongs to. */
  readonly jobId: string | null;
}

export interface ChangeSection {
  readonly key: string;
  readonly title: string;
  readonly rows: readonly ChangeRow[];
}

export interface ChangeSummary {
  readonly headline: string;
  readonly notices: readonly string[];
  readonly counts: readonly { readonly key: string; readonly label: string; readonly value: number }[];
  readonly sections: readonly ChangeSection[];
}

const shortHash = (h: string | null): string => (h ? h.slice(0, 10) : '–');

/** `name: before → after` for each field that differs, `∅` for an absent one. */
export function fieldsDiff(before: Readonly<Record<string, string>> | null, after: Readonly<Record<string, string>> | null): string {
  const names = [...new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})])].sort();
  return names
    .filter((n) => before?.[n] !== after?.[n])
    .map((n) => `${n}: ${before?.[n] ?? '∅'} → ${after?.[n] ?? '∅'}`)
    .join('; ');
}

export function fieldsText(fields: Readonly<Record<string, string>> | null): string {
  return Object.entries(fields ?? {})
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([n, v]) => `${n}: ${v}`)
    .join('; ');
}

function pageRows(c: JobChanges, list: readonly PageChange[], detail: (p: PageChange) => string): ChangeRow[] {
  return list.map((p) => ({
    url: p.url,
    detail: detail(p),
    fetchId: p.fetch_id ?? p.previous_fetch_id,
    jobId: p.fetch_id ? c.job_id : p.previous_fetch_id ? c.previous_job_id : null,
  }));
}

function itemRows(list: readonly ItemChange[], detail: (i: ItemChange) => string): ChangeRow[] {
  return list.map((i) => ({ url: i.index === null ? i.url : `${i.url} #${i.index + 1}`, detail: detail(i), fetchId: null, jobId: null }));
}

export function changeSummary(c: JobChanges): ChangeSummary {
  const notices: string[] = [];
  if (!c.settled) notices.push(`Still settling: ${c.waiting_for.join(', ')}. The answer may change as the read models catch up.`);
  if (c.status !== 'finished' && c.status !== 'failed' && c.status !== 'cancelled') notices.push('The run is still going: these are its changes so far.');
  if (c.truncated) notices.push('Some lists are cut; the counts are whole.');
  const counts = [
    ...(['changed', 'new', 'gone', 'unchanged', 'unknown'] as const).map((k) => ({ key: `pages-${k}`, label: `${k} pages`, value: c.pages.counts[k] })),
    ...(['changed', 'new', 'removed', 'unchanged'] as const).map((k) => ({ key: `items-${k}`, label: `${k} items`, value: c.items.counts[k] })),
  ];
  const sections: ChangeSection[] = [
    { key: 'pages-changed', title: 'Changed pages', rows: pageRows(c, c.pages.changed, (p) => `content ${shortHash(p.previous_content_hash)} → ${shortHash(p.content_hash)}`) },
    { key: 'pages-new', title: 'New pages', rows: pageRows(c, c.pages.new, () => 'not in the previous run') },
    { key: 'pages-gone', title: 'Gone pages', rows: pageRows(c, c.pages.gone, () => 'not fetched in this run') },
    { key: 'items-changed', title: 'Changed items', rows: itemRows(c.items.changed, (i) => fieldsDiff(i.previous_fields, i.fields)) },
    { key: 'items-new', title: 'New items', rows: itemRows(c.items.new, (i) => fieldsText(i.fields)) },
    { key: 'items-removed', title: 'Removed items', rows: itemRows(c.items.removed, (i) => fieldsText(i.previous_fields)) },
  ].filter((s) => s.rows.length > 0);
  return {
    headline: c.previous_job_id
      ? `Compared with the schedule's previous finished run, ${c.previous_job_id.slice(0, 8)}.`
      : 'The first finished run of its schedule: every page and item is new.',
    notices,
    counts,
    sections,
  };
}
