/**
 * `npm run import-cycles -w @trawl/checks`, run by `npm run lint`: every package's files
 * (src/import-cycles.ts); exits 1 on any import circle, naming its files.
 */
import { join } from 'node:path';
import { workspacePackages } from './import-layers.js';
import { importCycles } from './import-cycles.ts';

const ROOT = join(import.meta.dirname, '..', '..', '..');

const dirs = [...workspacePackages(ROOT).values()].map((p) => p.dir);
const { cycles, modules } = await importCycles(ROOT, dirs);
for (const c of cycles) console.error(`import circle: ${c.join(' → ')}`);
if (cycles.length > 0) {
  console.error(`import-cycles: ${cycles.length} import circle(s): move what both sides need beneath them, or turn the dependency around`);
  process.exit(1);
}
console.log(`import-cycles: ${modules} modules of ${dirs.length} packages, no import circle`);
