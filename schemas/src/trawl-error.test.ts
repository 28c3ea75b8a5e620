import { describe, expect, it } from 'vitest';
import { TrawlError } from './trawl-error.ts';

class ExampleRefusedError extends TrawlError {
  readonly code = 'TRAWL_EXAMPLE_REFUSED';
  readonly retriable = false;
}

describe('TrawlError', () => {
  it('carries its code, retriable flag, cause and class name', () => {
    const cause = new Error('underneath');
    const err = new ExampleRefusedError('refused', { cause });
    expect(err).toBeInstanceOf(TrawlError);
    expect(err).toBeInstanceOf(Error);
    expect(err).toMatchObject({ code: 'TRAWL_EXAMPLE_REFUSED', retriable: false, message: 'refused', name: 'ExampleRefusedError' });
    expect(err.cause).toBe(cause);
  });
});
