import { describe, expect, it } from 'vitest';
import { isRetriable, TrawlError } from './errors.ts';

class Refused extends TrawlError {
  readonly code = 'TRAWL_TEST_REFUSED';
  readonly retriable = false;
}

describe('isRetriable', () => {
  it('retries unknown errors and honours a foreign retriable flag', () => {
    expect(isRetriable(new Error('socket hang up'))).toBe(true);
    expect(isRetriable('a string thrown')).toBe(true);
    expect(isRetriable(Object.assign(new Error('bad request'), { retriable: false }))).toBe(false);
  });

  it("takes a TrawlError's own verdict", () => {
    expect(isRetriable(new Refused('404'))).toBe(false);
  });
});
