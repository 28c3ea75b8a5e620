import { describe, expect, it } from 'vitest';
import { checkReachOptions } from './check-reach-options.ts';

describe('checkReachOptions: block_patterns', () => {
  it('accepts RE2 patterns within the bounds', () => {
    expect(checkReachOptions({ block_patterns: ['Access (?:denied|restricted)', 'captcha-\\d+'] })).toBeNull();
    expect(checkReachOptions({ block_patterns: [] })).toBeNull();
  });

  it('refuses a pattern RE2 does not run, naming it', () => {
    expect(checkReachOptions({ block_patterns: ['ok', '(a)\\1'] }, { prefix: 'request.' })).toMatchObject({ code: 'UNSUPPORTED_PATTERN', field: 'request.block_patterns.1' });
    expect(checkReachOptions({ block_patterns: ['(?=x)y'] })).toMatchObject({ code: 'UNSUPPORTED_PATTERN', field: 'block_patterns.0' });
  });

  it('refuses what is no regular expression, too many patterns, or one too long', () => {
    expect(checkReachOptions({ block_patterns: ['(unclosed'] })).toMatchObject({ code: 'VALIDATION_FAILED', field: 'block_patterns.0' });
    expect(checkReachOptions({ block_patterns: Array.from({ length: 33 }, (_, i) => `p${i}`) })).toMatchObject({ code: 'VALIDATION_FAILED', field: 'block_patterns' });
    expect(checkReachOptions({ block_patterns: ['x'.repeat(501)] })).toMatchObject({ code: 'VALIDATION_FAILED', field: 'block_patterns.0' });
  });
});
