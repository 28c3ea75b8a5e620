/** `trawl build`: compiles every service into .trawl/build/<app>/ (what `trawl up` does before starting them; the Docker image runs it once). */
import { isInstalled, serviceCatalogue, type ServiceSpec } from '../services/catalogue.ts';
import { compileServices } from '../services/supervisor.ts';
import { styleFor } from '../lib/format.ts';

/** Compiles the services' apps and says so on stderr (`trawl build`, and `trawl up` before it starts them). */
export async function compileAndReport(specs: readonly ServiceSpec[]): Promise<void> {
  const err = process.stderr;
  const compiled = await compileServices(specs);
  err.write(`${styleFor(err).green('✓')} ${compiled.apps} apps compiled in ${Math.round(compiled.ms)} ms → ${compiled.dir}\n`);
}

export async function build(): Promise<void> {
  await compileAndReport(serviceCatalogue().filter((spec) => isInstalled(spec.app)));
}
