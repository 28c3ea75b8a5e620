/**
 * `npm run rebuild:dead-letters -w @trawl/projector-pg`, with projector-pg stopped: empties
 * `dead_letters` and its offsets, so that projector-pg's next start projects both dead-letter
 * topics again from the beginning. Exit code 1 with the error's code when it fails.
 */
import { createKafka, createLogger } from '@trawl/streams';
import { createPool } from '@trawl/store';
import { ProjectorPgError } from '../errors.ts';
import { rebuildDeadLetters } from './rebuild-dead-letters.ts';

const logger = createLogger('rebuild-dead-letters');
const pool = createPool({ applicationName: 'trawl-rebuild-dead-letters', max: 1 });
try {
  const { removed } = await rebuildDeadLetters({ pool, kafka: createKafka({ clientId: 'trawl-rebuild-dead-letters', logger }) });
  process.stdout.write(`${JSON.stringify({ removed, next: 'start projector-pg: it projects the dead-letter topics again from offset 0' })}\n`);
  process.exitCode = 0;
} catch (err) {
  const code = err instanceof ProjectorPgError ? err.code : 'PG_DEAD_LETTERS_REBUILD_FAILED';
  process.stderr.write(`rebuild of dead_letters failed (${code}): ${(err as Error).message}\n`);
  process.exitCode = 1;
} finally {
  await pool.end();
}
