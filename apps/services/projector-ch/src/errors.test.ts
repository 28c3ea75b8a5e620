import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { TrawlError } from '@trawl/schemas';
import {
  ClickHouseQueryError, ClickHouseUnavailableError, ProjectionSupersededError, ProjectionVersionMismatchError, PROJECTOR_CH_ERROR_CODES,
  ProjectorChError, ReplayInProgressError, ReplayOptionsError, ReplayVerificationError, isRetriableChCode,
} from './errors.ts';

const all: TrawlError[] = [
  new ClickHouseUnavailableError('m'), new ClickHouseQueryError('m', 60, false), new ProjectionVersionMismatchError('m'),
  new ProjectionSupersededError('m'), new ReplayVerificationError('m', {}), new ReplayOptionsError('m'), new ReplayInProgressError('m'),
];

describe('the projector-ch error catalogue', () => {
  it('has one class per code, each documented in the README', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    expect(all.map((e) => e.code).sort()).toEqual([...PROJECTOR_CH_ERROR_CODES].sort());
    for (const e of all) {
      // The client's two are the ClickHouse library's classes; the rest this package's own.
      expect(e).toBeInstanceOf(['CH_UNAVAILABLE', 'CH_QUERY'].includes(e.code) ? TrawlError : ProjectorChError);
      expect(readme).toContain(e.code);
    }
  });

  it('retries what passes (unavailable, overload) and not what will not (unknown table)', () => {
    expect(new ClickHouseUnavailableError('m').retriable).toBe(true);
    expect(isRetriableChCode(252)).toBe(true); // too many parts
    expect(isRetriableChCode(60)).toBe(false); // unknown table
  });
});
