/**
 * `export *` is refused: ESLint with the repository's own configuration, on code linted as if it
 * were a package's index.
 */
import { join } from 'node:path';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';
import { REPO_ROOT } from '../src/import-layers.js';

const eslint = new ESLint({ cwd: REPO_ROOT });

async function exportErrors(code: string): Promise<string[]> {
  const [result] = await eslint.lintText(code, { filePath: join(REPO_ROOT, 'apps/libs/store/src/fixture.ts') });
  return result!.messages.filter((m) => m.ruleId === 'no-restricted-syntax').map((m) => m.message);
}

describe('named exports', () => {
  it('refuses export * and export * as', async () => {
    expect(await exportErrors("export * from './pool.ts';\nexport * as migrate from './migrate.ts';\n")).toHaveLength(2);
  });

  it('accepts named exports', async () => {
    expect(await exportErrors("export { createPool, type Pool } from './pool.ts';\n")).toEqual([]);
  });
});
