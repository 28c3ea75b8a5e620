/** `npm run build -w @trawl/console`: bundles the front end into dist/ (see src/server/assets/bundle.ts). */
import { buildBundle } from '../src/server/assets/bundle.ts';

const manifest = await buildBundle();
const sizes = Object.entries(manifest.bytes)
  .filter(([f]) => !f.endsWith('.map'))
  .map(([f, b]) => `${f} ${(b / 1024).toFixed(1)} KB`)
  .join(', ');
process.stdout.write(`console built in ${manifest.build_ms} ms: ${sizes}\n`);
