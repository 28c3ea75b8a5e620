/** `trawl down`: every service (reverse start order, SIGTERM then SIGKILL), then the stack. */
import { formatDownStep, stackDown, styleFor as stackStyle } from '@trawl/stack';
import { styleFor } from '../lib/format.ts';
import { serviceCatalogue } from '../services/catalogue.ts';
import { stopService } from '../services/supervisor.ts';

export async function down(options: { keepStack?: boolean } = {}): Promise<void> {
  const err = process.stderr;
  const s = styleFor(err);
  const specs = serviceCatalogue().reverse();
  // Stop the edges (API, demo site) first, then the pipeline; each drains on SIGTERM.
  for (const spec of specs) {
    const result = await stopService(spec);
    if (result !== 'not running') err.write(`${result === 'killed' ? s.yellow('✗') : s.green('↓')} ${spec.name} ${result}\n`);
  }
  if (options.keepStack) return;
  const st = stackStyle(err);
  await stackDown({ onStep: (step) => void err.write(formatDownStep(step, st) + '\n') });
}
