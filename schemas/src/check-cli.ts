/**
 * `npm run schemas:check` fails when a schema is not BACKWARD compatible with every released
 * version; `npm run schemas:check -- --release` freezes changed schemas as their next version.
 */
import { checkSchemas, releaseSchemas } from './compat.ts';

const release = process.argv.includes('--release');
let failed = false;
for (const r of checkSchemas()) {
  const at = r.releasedVersion === null ? 'unreleased' : `v${r.releasedVersion}`;
  if (r.problems.length > 0) {
    failed = true;
    process.stdout.write(`✘ ${r.name} (${at}): not BACKWARD compatible\n${r.problems.map((p) => `    ${p}\n`).join('')}`);
  } else {
    process.stdout.write(`✔ ${r.name} (${at})${r.changed ? ': changed, compatible; release with --release' : ''}\n`);
  }
}
if (failed) {
  process.exitCode = 1;
} else if (release) {
  for (const v of releaseSchemas()) process.stdout.write(`released ${v}\n`);
}
