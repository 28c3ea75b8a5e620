/**
 * Pages of two runs of a schedule, compared: a pure function of the two runs' page rows.
 *
 * A page is its normalised requested URL (the frontier's dedupe key, the same in every run), and it
 * is *present* in a run when that run fetched it (a PageFetched; a page that failed for good is
 * absent, as one the run never reached). Then, of the URLs present in either run:
 *
 * - `new`: present now, absent in the previous run;
 * - `gone`: present in the previous run, absent now (not linked any more, or failing);
 * - `changed` / `unchanged`: present in both, with different / equal content hashes (the sha-256
 *   of the body as fetched). A page the HTTP cache reused (a 304, or `max_age`) carries the hash
 *   of the body it reused, so it compares as the body it stands for;
 * - `unknown`: present in both, but a run kept no content for it (the job asked for no `formats`,
 *   or the page was not HTML), so there is no hash to compare.
 *
 * The outcome is ordered by URL, so one answer has one form.
 */

/** What the comparison needs of a `job_pages` row. */
export interface RunPage {
  readonly fetch_id: string;
  readonly url: string;
  readonly ok: boolean;
  readonly content_hash: string | null;
}

export type PageChangeKind = 'new' | 'changed' | 'gone' | 'unchanged' | 'unknown';

export const PAGE_CHANGE_KINDS: readonly PageChangeKind[] = ['new', 'changed', 'gone', 'unchanged', 'unknown'];

export interface PageChange {
  readonly kind: PageChangeKind;
  readonly url: string;
  /** This run's fetch of the page; null when it is gone. */
  readonly fetch_id: string | null;
  readonly content_hash: string | null;
  /** The previous run's fetch of the page; null when it is new. */
  readonly previous_fetch_id: string | null;
  readonly previous_content_hash: string | null;
}

/**
 * How one page compares: `previous` and `current` are its rows in the two runs (undefined when
 * the run has none); null when the page is present in neither.
 */
export function comparePage(previous: RunPage | undefined, current: RunPage | undefined): PageChangeKind | null {
  const before = previous?.ok ? previous : undefined;
  const now = current?.ok ? current : undefined;
  if (!before && !now) return null;
  if (!before) return 'new';
  if (!now) return 'gone';
  if (before.content_hash === null || now.content_hash === null) return 'unknown';
  return before.content_hash === now.content_hash ? 'unchanged' : 'changed';
}

/** Rows by URL. A run has one row per URL (its fetch id is derived from job and URL); a duplicate keeps a fetched row over a failed one. */
function byUrl(pages: readonly RunPage[]): Map<string, RunPage> {
  const out = new Map<string, RunPage>();
  for (const p of pages) {
    const had = out.get(p.url);
    if (!had || (!had.ok && p.ok)) out.set(p.url, p);
  }
  return out;
}

/** The change of one URL given its rows in the two runs, or null when it is present in neither. */
export function pageChange(url: string, previous: RunPage | undefined, current: RunPage | undefined): PageChange | null {
  const kind = comparePage(previous, current);
  if (kind === null) return null;
  return {
    kind,
    url,
    fetch_id: kind === 'gone' ? null : current!.fetch_id,
    content_hash: kind === 'gone' ? null : current!.content_hash,
    previous_fetch_id: kind === 'new' ? null : previous!.fetch_id,
    previous_content_hash: kind === 'new' ? null : previous!.content_hash,
  };
}

/** Two whole runs compared, in URL order (the listing streams the same pairs from SQL: read-model.ts's `pagePairs`). */
export function comparePages(previous: readonly RunPage[], current: readonly RunPage[]): PageChange[] {
  const before = byUrl(previous);
  const now = byUrl(current);
  const urls = [...new Set([...before.keys(), ...now.keys()])].sort();
  const out: PageChange[] = [];
  for (const url of urls) {
    const change = pageChange(url, before.get(url), now.get(url));
    if (change) out.push(change);
  }
  return out;
}
