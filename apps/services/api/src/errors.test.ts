/**
 * The error catalogue is complete and documented: every code has an HTTP status and a
 * description, the README's table lists exactly the catalogue with the same statuses, and every
 * code is raised somewhere (no dead entries).
 */
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ApiError, ERRORS, ERROR_CODES } from './errors.ts';

const here = import.meta.dirname;

function sources(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return sources(path);
    return path.endsWith('.ts') && !path.endsWith('.test.ts') && !path.endsWith('errors.ts') ? [path] : [];
  });
}

describe('error catalogue', () => {
  it('gives every code a 4xx/5xx status and a description', () => {
    for (const code of ERROR_CODES) {
      expect(ERRORS[code].status, code).toBeGreaterThanOrEqual(400);
      expect(ERRORS[code].status, code).toBeLessThan(600);
      expect(ERRORS[code].description.length, code).toBeGreaterThan(10);
      expect(code).toMatch(/^[A-Z][A-Z_]+$/);
    }
  });

  it('is documented in the README, code by code, with the same status', () => {
    const readme = readFileSync(join(here, '..', 'README.md'), 'utf8');
    const documented = new Map([...readme.matchAll(/^\| `([A-Z_]+)` \| (\d{3}) \|/gm)].map((m) => [m[1]!, Number(m[2])]));
    expect([...documented.keys()].sort()).toEqual([...ERROR_CODES].sort());
    for (const code of ERROR_CODES) expect(documented.get(code), code).toBe(ERRORS[code].status);
  });

  it('has no dead codes: each one is raised somewhere in the app', () => {
    const text = sources(here).map((f) => readFileSync(f, 'utf8')).join('\n');
    for (const code of ERROR_CODES) expect(text, code).toContain(`'${code}'`);
  });

  it('ApiError carries the status, retriable flag and body of its code', () => {
    const err = new ApiError('RATE_LIMITED', 'slow down', { field: 'x' });
    expect(err.statusCode).toBe(429);
    expect(err.retriable).toBe(true);
    expect(err.toBody()).toEqual({ error: { code: 'RATE_LIMITED', message: 'slow down', field: 'x' } });
    expect(new ApiError('JOB_NOT_FOUND').retriable).toBe(false);
    expect(new ApiError('JOB_NOT_FOUND').message).toBe(ERRORS.JOB_NOT_FOUND.description);
  });
});
