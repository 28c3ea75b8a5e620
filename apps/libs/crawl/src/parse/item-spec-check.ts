/**
 * A spec's item rules beyond its CSS selectors (selector-check.ts): the XPath expressions
 * (xpath-check.ts), each field's transforms (item-transforms.ts) and the item schema
 * (item-schema.ts). The API checks them when a website is saved or a crawl submitted, and the
 * worker once per spec where pages are parsed (parse-page.ts), so both refuse alike.
 */
import type { FieldTransform } from '@trawl/schemas';
import { itemSchemaProblem } from './item-schema.ts';
import { transformsProblem } from './item-transforms.ts';
import { xpathProblem } from './xpath-check.ts';

/**
 * What is wrong, and where (`item_root_xpath`, `item_fields.2.xpath`, `item_fields.0.transforms`,
 * `item_schema`). `invalid` and `costly` are an XPath's (as a selector's), `transform` a field's
 * transforms, `schema` the item schema.
 */
export interface ItemSpecProblem {
  readonly field: string;
  readonly kind: 'invalid' | 'costly' | 'transform' | 'schema';
  readonly message: string;
}

/** The item rules a spec, a website or a request carries (fields as the API or the events give them). */
export interface ItemSpec {
  readonly item_root?: string | null;
  readonly item_root_xpath?: string | null;
  readonly item_schema?: string | null;
  readonly item_fields: readonly { readonly name: string; readonly selector?: string; readonly xpath?: string | null; readonly transforms?: readonly FieldTransform[] }[];
}

/** The first problem of the spec's item rules, or null. */
export function itemSpecProblem(spec: ItemSpec): ItemSpecProblem | null {
  if (spec.item_root && spec.item_root_xpath) {
    return { field: 'item_root_xpath', kind: 'invalid', message: 'item_root_xpath is given with item_root: an item root is CSS or XPath, not both' };
  }
  if (spec.item_root_xpath) {
    const problem = xpathProblem(spec.item_root_xpath, 'root');
    if (problem) return { field: 'item_root_xpath', kind: problem.kind, message: `item_root_xpath ${JSON.stringify(spec.item_root_xpath)} ${problem.message}` };
  }
  for (const [i, f] of spec.item_fields.entries()) {
    if (f.xpath !== null && f.xpath !== undefined) {
      const at = `item_fields.${i}.xpath`;
      if (f.selector !== undefined && f.selector !== '') return { field: at, kind: 'invalid', message: `${at} is given with a selector: a field is read by CSS or by XPath, not both` };
      const problem = xpathProblem(f.xpath, 'field');
      if (problem) return { field: at, kind: problem.kind, message: `${at} ${JSON.stringify(f.xpath)} ${problem.message}` };
    }
    const transforms = transformsProblem(f.transforms ?? []);
    if (transforms) return { field: `item_fields.${i}.transforms`, kind: 'transform', message: `item_fields.${i} (${f.name}) ${transforms}` };
  }
  if (spec.item_schema) {
    const problem = itemSchemaProblem(spec.item_schema);
    if (problem) return { field: 'item_schema', kind: 'schema', message: `item_schema ${problem}` };
  }
  return null;
}
