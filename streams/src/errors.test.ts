import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as errors from './errors.ts';
import { isRetriable } from '@trawl/base';
import { StreamsError } from './errors.ts';

type ErrorClass = new (message: string, ...rest: never[]) => StreamsError;

/** Every concrete error class of the package, built the way it is thrown. */
function catalogue(): StreamsError[] {
  return (Object.values(errors) as unknown[])
    .filter((v): v is ErrorClass => typeof v === 'function' && v.prototype instanceof StreamsError)
    .map((Cls) => (Cls.name === 'SchemaRegistryError' ? new errors.SchemaRegistryError('x', true) : new (Cls as unknown as new (m: string) => StreamsError)('x')));
}

describe('error catalogue', () => {
  it('gives every error a distinct code, a retriable flag and its class name', () => {
    const all = catalogue();
    expect(all.length).toBeGreaterThanOrEqual(7);
    expect(new Set(all.map((e) => e.code)).size).toBe(all.length);
    for (const e of all) {
      expect(e.code).toMatch(/^TRAWL_[A-Z_]+$/);
      expect(typeof e.retriable).toBe('boolean');
      expect(e.name).toBe(e.constructor.name);
    }
  });

  it('documents every code in the README', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    for (const e of catalogue()) expect(readme, e.code).toContain(e.code);
  });

  it('retries unknown errors and honours a foreign retriable flag', () => {
    expect(isRetriable(new Error('socket hang up'))).toBe(true);
    expect(isRetriable(Object.assign(new Error('bad request'), { retriable: false }))).toBe(false);
    expect(isRetriable(new errors.NonRetriableError('404'))).toBe(false);
    expect(isRetriable(new errors.UndecodableMessageError('bad magic'))).toBe(false);
  });
});
