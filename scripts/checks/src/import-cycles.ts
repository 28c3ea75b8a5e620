/**
 * No import circles: dependency-cruiser reads every import of the packages, type-only imports
 * included (a type that two modules both need still ties them), and each circle found is an error.
 * A circle is broken by moving what both sides need to where it belongs (a module of its own
 * beneath both, or the dependency turned around), never by hiding an import from the check.
 */
import { join } from 'node:path';
import { cruise, type ICruiseOptions, type IViolation } from 'dependency-cruiser';
import extractTSConfig from 'dependency-cruiser/config-utl/extract-ts-config';

/** Folders whose files are no code of a package: installed, built, generated, or broken on purpose. */
const NOT_CODE = '(^|/)(node_modules|dist|generated|\\.trawl)/|^scripts/checks/test/fixtures/';

/** Each circle once, as the files from one of them back to it (`a.ts → b.ts → a.ts`). */
export type ImportCycle = readonly string[];

export interface ImportCycles {
  readonly cycles: readonly ImportCycle[];
  /** The modules read, so that a check that reads nothing is seen. */
  readonly modules: number;
}

/**
 * The circles among the files under `paths` (relative to `root`, the repository root or a
 * fixture's folder, which holds the tsconfig.json their imports resolve by).
 */
export async function importCycles(root: string, paths: readonly string[], options: { tsConfig?: string; exclude?: string } = {}): Promise<ImportCycles> {
  // Absolute: dependency-cruiser's resolver reads the file from the working directory, not baseDir.
  const tsConfig = join(root, options.tsConfig ?? 'tsconfig.base.json');
  const cruiseOptions: ICruiseOptions = {
    baseDir: root,
    validate: true,
    ruleSet: { forbidden: [{ name: 'no-import-cycle', severity: 'error', from: {}, to: { circular: true } }] },
    doNotFollow: { path: 'node_modules' },
    exclude: { path: options.exclude ?? NOT_CODE },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: tsConfig },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'types', 'node', 'default'] },
  };
  const { output } = await cruise([...paths], cruiseOptions, {}, { tsConfig: extractTSConfig(tsConfig) });
  if (typeof output === 'string') throw new Error(`dependency-cruiser answered text instead of a result: ${output.slice(0, 200)}`);
  const seen = new Set<string>();
  const cycles: ImportCycle[] = [];
  for (const v of output.summary.violations as IViolation[]) {
    if (!v.cycle) continue;
    const files = [v.from, ...v.cycle.map((c) => c.name)];
    const key = [...new Set(files)].sort().join('\n');
    if (seen.has(key)) continue;
    seen.add(key);
    cycles.push(files);
  }
  return { cycles, modules: output.summary.totalCruised };
}
