/**
 * A website's selectors (item root, fields, next link), checked when they are configured and when a
 * crawl is submitted with them: a selector whose cost grows with the page (`a:has(~ b)`) is refused
 * here, with the construct named, rather than failing every page of the job. The check is the
 * workers' own (`@trawl/crawl/selectors`), so the two never disagree; what passes is still bounded
 * in time where workers run it (their parse threads).
 */
import { selectorProblem, specSelectors } from '@trawl/crawl/selectors';
import { paginationProblem } from '@trawl/crawl';
import { ApiError } from '../errors.ts';

/**
 * Throws VALIDATION_FAILED for a selector that is no selector, UNSUPPORTED_SELECTOR for a costly one;
 * INVALID_ACTION for a load-more list without its button (or with a button selector that is none).
 */
export function checkSelectors(website: Parameters<typeof specSelectors>[0] & { readonly pagination_type?: string | null; readonly load_more_selector?: string | null }, prefix = ''): void {
  const pagination = paginationProblem(website);
  if (pagination) throw new ApiError(pagination.code, pagination.message.replace(/^load_more_selector/, `${prefix}load_more_selector`), { field: `${prefix}${pagination.field}` });
  for (const [field, selector] of specSelectors(website)) {
    const problem = selectorProblem(selector);
    if (!problem) continue;
    const at = `${prefix}${field}`;
    throw new ApiError(problem.kind === 'invalid' ? 'VALIDATION_FAILED' : 'UNSUPPORTED_SELECTOR', `${at} ${JSON.stringify(selector)} ${problem.message}`, { field: at });
  }
}
