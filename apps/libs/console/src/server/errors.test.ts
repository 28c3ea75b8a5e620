import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CONSOLE_ERRORS, ConsoleError } from './errors.ts';

describe('error catalogue', () => {
  it('documents every code in the README, with its status', () => {
    const readme = readFileSync(join(import.meta.dirname, '..', '..', 'README.md'), 'utf8');
    const rows = new Map([...readme.matchAll(/^\| `([A-Z_]+)` \| (\d{3}) \|/gm)].map((m) => [m[1]!, Number(m[2])]));
    expect(Object.fromEntries(rows)).toEqual(Object.fromEntries(Object.entries(CONSOLE_ERRORS).map(([code, e]) => [code, e.status])));
  });

  it("answers in the API's error shape; 5xx are retriable", () => {
    const e = new ConsoleError('VALIDATION_FAILED', 'from must be before to', 'from');
    expect(e.toBody()).toEqual({ error: { code: 'VALIDATION_FAILED', message: 'from must be before to', field: 'from' } });
    expect(e.statusCode).toBe(400);
    expect(e.retriable).toBe(false);
    expect(new ConsoleError('DEPENDENCY_UNAVAILABLE').retriable).toBe(true);
  });
});
