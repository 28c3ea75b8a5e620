/**
 * The analytics projection's version. Bump it when the DDL in infra/clickhouse/sql or the event →
 * row mapping changes; `trawl replay ch` then builds the new version's tables and swaps them in.
 */
export const PROJECTION = 'ch';
export const PROJECTION_VERSION = 1;

export function projectionName(version: number = PROJECTION_VERSION): string {
  return `${PROJECTION}-v${version}`;
}
