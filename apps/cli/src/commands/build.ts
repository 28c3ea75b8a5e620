/** `trawl build`: compiles every service into .trawl/build/<app>/ (what `trawl up` does before starting them; the Docker image runs it once). */
import { isInstalled, serviceCatalogue } from '../services/catalogue.ts';
import { compileServices } from '../services/supervisor.ts';
import { styleFor } from '../lib/format.ts';

export async function build(): Promise<void> {
  const err = process.stderr;
  const s = styleFor(err);
  const compiled = await compileServices(serviceCatalogue().filter((spec) => isInstalled(spec.app)));
  err.write(`${s.green('✓')} ${compiled.apps} apps compiled in ${Math.round(compiled.ms)} ms → ${compiled.dir}\n`);
}
