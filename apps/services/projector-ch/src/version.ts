/**
 * The analytics projection's version. Bump it when the DDL in infra/clickhouse/sql or the event →
 * row mapping changes; `trawl replay ch` then builds the new version's tables and swaps them in.
 *
 * 2 — JobPaused and JobResumed are job events too (a job's paused time, `jobRunTimes`);
 * 1 — page, item and job facts with their rollups.
 */
import { versionedProjectionName } from '@trawl/streams';

export const PROJECTION = 'ch';
export const PROJECTION_VERSION = 2;

export function projectionName(version: number = PROJECTION_VERSION): string {
  return versionedProjectionName(PROJECTION, version);
}
