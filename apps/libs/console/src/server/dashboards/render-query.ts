/**
 * Fills a dashboard query's placeholders with literals. The only way values reach the SQL text:
 * integers through `uint`, strings through `quote`, and a query is never rendered without the
 * user it is scoped to — an unscoped dashboard query cannot be built, let alone sent.
 */
import { quote, uint } from '@trawl/clickhouse';

export interface QueryValues {
  readonly from: number;
  readonly to: number;
  readonly step: number;
  /** The API key's owner. Required and non-empty. */
  readonly user: string;
  /** '' for every host. */
  readonly host: string;
  /** '' for every job. */
  readonly jobId: string;
  readonly limit: number;
}

const PLACEHOLDER = /\{([a-z_]+)\}/g;

export function renderQuery(template: string, v: QueryValues): string {
  if (typeof v.user !== 'string' || v.user === '') throw new TypeError('a dashboard query needs the user it is scoped to');
  if (!template.includes('{user}')) throw new TypeError('a dashboard query must be scoped by {user}');
  const literals: Readonly<Record<string, string>> = {
    from: uint(v.from),
    to: uint(v.to),
    step: uint(v.step),
    limit: uint(v.limit),
    user: quote(v.user),
    host: quote(v.host),
    job_id: quote(v.jobId),
  };
  return template.replace(PLACEHOLDER, (_m, name: string) => {
    const literal = literals[name];
    if (literal === undefined) throw new TypeError(`unknown placeholder {${name}}`);
    return literal;
  });
}
