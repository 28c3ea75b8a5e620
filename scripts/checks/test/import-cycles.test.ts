import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { importCycles } from '../src/import-cycles.ts';

const ROOT = join(import.meta.dirname, 'fixtures', 'cycles');

describe('the import-cycle check', () => {
  it('finds a circle, a type-only import on one side included', async () => {
    const { cycles, modules } = await importCycles(ROOT, ['circle'], { tsConfig: 'tsconfig.json' });
    expect(modules).toBe(2);
    expect(cycles).toHaveLength(1);
    expect([...cycles[0]!].sort()).toEqual(['circle/feature.ts', 'circle/feature.ts', 'circle/registry.ts'].sort());
  });

  it('passes the same modules once the shared type sits beneath both', async () => {
    expect(await importCycles(ROOT, ['line'], { tsConfig: 'tsconfig.json' })).toEqual({ cycles: [], modules: 3 });
  });
});
