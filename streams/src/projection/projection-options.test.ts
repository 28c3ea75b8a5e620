import { describe, expect, it } from 'vitest';
import { InvalidOptionError } from '../errors.ts';
import { projectionFetchSettings } from './projection-options.ts';

describe('projectionFetchSettings', () => {
  it('waits for 64 KiB or 50 ms unless told otherwise', () => {
    expect(projectionFetchSettings({}, {})).toEqual({ minBytes: 65_536, maxWaitTimeInMs: 50 });
  });

  it('takes the environment, and options before it', () => {
    const env = { TRAWL_PROJECTION_FETCH_MIN_BYTES: '1', TRAWL_PROJECTION_FETCH_MAX_WAIT_MS: '500' };
    expect(projectionFetchSettings({}, env)).toEqual({ minBytes: 1, maxWaitTimeInMs: 500 });
    expect(projectionFetchSettings({ fetchMinBytes: 1024, maxWaitTimeMs: 20 }, env)).toEqual({ minBytes: 1024, maxWaitTimeInMs: 20 });
  });

  it('refuses what is not a positive integer, naming where it came from', () => {
    expect(() => projectionFetchSettings({}, { TRAWL_PROJECTION_FETCH_MIN_BYTES: '64k' })).toThrow(InvalidOptionError);
    expect(() => projectionFetchSettings({}, { TRAWL_PROJECTION_FETCH_MIN_BYTES: '64k' })).toThrow(/TRAWL_PROJECTION_FETCH_MIN_BYTES: 64k/);
    expect(() => projectionFetchSettings({ maxWaitTimeMs: 0 }, {})).toThrow(/maxWaitTimeMs: 0/);
  });
});
