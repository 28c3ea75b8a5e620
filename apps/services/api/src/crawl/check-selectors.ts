/**
 * A website's selectors (item root, fields, next link), XPath expressions, field transforms and item
 * schema, checked when they are configured and when a crawl is submitted with them: a selector or
 * an XPath whose cost grows with the page (`a:has(~ b)`, `//li/following::a`) is refused here, with
 * the construct named, rather than failing every page of the job. The checks are the workers' own
 * (`@trawl/crawl/selectors`, `@trawl/crawl/items`), so the two never disagree; what passes is still
 * bounded in time where workers run it (their parse threads).
 */
import { selectorProblem, specSelectors } from '@trawl/crawl/selectors';
import { itemSpecProblem, type ItemSpec } from '@trawl/crawl/items';
import { paginationProblem } from '@trawl/crawl';
import { ApiError, type ErrorCode } from '../errors.ts';

/** What the item check's kinds answer: an XPath as a selector, a transform and a schema by their own codes. */
const ITEM_CODES: Record<NonNullable<ReturnType<typeof itemSpecProblem>>['kind'], ErrorCode> = {
  invalid: 'VALIDATION_FAILED',
  costly: 'UNSUPPORTED_SELECTOR',
  transform: 'INVALID_TRANSFORM',
  schema: 'INVALID_ITEM_SCHEMA',
};

type CheckedSpec = Omit<Parameters<typeof specSelectors>[0], 'item_fields'> &
  Omit<ItemSpec, 'item_schema' | 'item_fields'> & {
    readonly item_fields: readonly (ItemSpec['item_fields'][number] & { readonly selector: string })[];
    readonly item_schema?: string | object | null;
    readonly pagination_type?: string | null;
    readonly load_more_selector?: string | null;
  };

/**
 * Throws VALIDATION_FAILED for a selector or XPath that is none, UNSUPPORTED_SELECTOR for a costly
 * one, INVALID_TRANSFORM for a field's transforms that cannot run, INVALID_ITEM_SCHEMA for an item
 * schema that does not compile within its bounds; INVALID_ACTION for a load-more list without its
 * button (or with a button selector that is none).
 */
export function checkSelectors(website: CheckedSpec, prefix = ''): void {
  const pagination = paginationProblem(website);
  if (pagination) throw new ApiError(pagination.code, pagination.message.replace(/^load_more_selector/, `${prefix}load_more_selector`), { field: `${prefix}${pagination.field}` });
  for (const [field, selector] of specSelectors(website)) {
    const problem = selectorProblem(selector);
    if (!problem) continue;
    const at = `${prefix}${field}`;
    throw new ApiError(problem.kind === 'invalid' ? 'VALIDATION_FAILED' : 'UNSUPPORTED_SELECTOR', `${at} ${JSON.stringify(selector)} ${problem.message}`, { field: at });
  }
  const schema = website.item_schema;
  const item = itemSpecProblem({ ...website, item_schema: schema !== null && typeof schema === 'object' ? JSON.stringify(schema) : (schema ?? null) });
  if (item) throw new ApiError(ITEM_CODES[item.kind], `${prefix}${item.message}`, { field: `${prefix}${item.field}` });
}

/** An item field as a request gives it: CSS `selector` or `xpath` (one of them), `attribute`, `transforms`. */
export interface ItemFieldInput {
  readonly name: string;
  readonly selector?: string;
  readonly xpath?: string | null;
  readonly attribute?: string | null;
  readonly transforms?: readonly { readonly type: string; readonly pattern?: string | null }[];
}

/**
 * Item fields as stored and carried by jobs: each with its `selector` (empty for an XPath field),
 * `xpath` (null for a CSS one), `attribute` and `transforms`. A field with neither a selector nor an
 * XPath is refused (VALIDATION_FAILED); one with both is refused by {@link checkSelectors}.
 */
export function normaliseItemFields<F extends ItemFieldInput>(fields: readonly F[], prefix = '') {
  return fields.map((f, i) => {
    const xpath = f.xpath ?? null;
    if (f.selector === undefined && xpath === null) {
      throw new ApiError('VALIDATION_FAILED', `${prefix}item_fields.${i} (${f.name}) needs a selector (CSS; empty for the item root itself) or an xpath`, { field: `${prefix}item_fields.${i}` });
    }
    if (f.selector !== undefined && f.selector !== '' && xpath !== null) {
      throw new ApiError('VALIDATION_FAILED', `${prefix}item_fields.${i}.xpath is given with a selector: a field is read by CSS or by XPath, not both`, { field: `${prefix}item_fields.${i}.xpath` });
    }
    const transforms = (f.transforms ?? []).map((t) => ({ type: t.type, pattern: t.pattern ?? null })) as { type: 'trim' | 'number' | 'date' | 'absolute_url' | 'regex'; pattern: string | null }[];
    return { name: f.name, selector: f.selector ?? '', attribute: f.attribute ?? null, xpath, transforms };
  });
}
