import { describe, expect, it } from 'vitest';
import { parseBenchOptions, parseVariant } from './bench-options.ts';

describe('--variant', () => {
  it('environment settings and JSON crawl spec fields, a JSON list kept whole', () => {
    expect(parseVariant('content:TRAWL_WORKER_CONCURRENCY=32,spec.formats=["markdown","text"],spec.max_age=60')).toEqual({
      label: 'trawl-content',
      env: { TRAWL_WORKER_CONCURRENCY: '32' },
      spec: { formats: ['markdown', 'text'], max_age: 60 },
    });
  });

  it('refuses a spec value that is not JSON, and a pair without =', () => {
    expect(() => parseVariant('x:spec.formats=markdown')).toThrow(/must be JSON/);
    expect(() => parseVariant('x:TRAWL_A')).toThrow(/is not K=V/);
    expect(() => parseVariant('no-label')).toThrow(/label:K=V/);
  });

  it('repeatable on the command line', () => {
    const o = parseBenchOptions(['--variant', 'a:TRAWL_A=1', '--variant', 'md:spec.formats=["markdown"]']);
    expect(o.variants.map((v) => [v.label, v.spec])).toEqual([['trawl-a', {}], ['trawl-md', { formats: ['markdown'] }]]);
  });
});
