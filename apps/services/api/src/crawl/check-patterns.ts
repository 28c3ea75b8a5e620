/**
 * A website's include/exclude patterns, checked when they are configured and when a crawl is
 * submitted with them: workers run them in a linear-time engine (RE2 syntax), so a pattern it
 * cannot run as written is refused here, with the construct named, rather than failing the job at
 * its start. The check is the workers' own compilation (`@trawl/crawl/patterns`), so the two can
 * never disagree.
 */
import { PatternError, PatternList } from '@trawl/crawl/patterns';
import { ApiError } from '../errors.ts';

const FIELDS = ['include_patterns', 'exclude_patterns'] as const;

/** Throws VALIDATION_FAILED for a pattern that is no regular expression, UNSUPPORTED_PATTERN for one the engine does not run. */
export function checkPatterns(website: { readonly include_patterns: readonly string[]; readonly exclude_patterns: readonly string[] }, prefix = ''): void {
  for (const field of FIELDS) {
    try {
      PatternList.compile(website[field]);
    } catch (err) {
      if (!(err instanceof PatternError)) throw err;
      const at = `${prefix}${field}.${err.index}`;
      const code = err.problem.kind === 'invalid' ? 'VALIDATION_FAILED' : 'UNSUPPORTED_PATTERN';
      throw new ApiError(code, `${at} ${err.message}`, { field: at });
    }
  }
}
