/**
 * The projector-pg service: `npm start -w @trawl/projector-pg`. Two projections share one pool
 * (with the store's statement timeout): the job read models, and `dead_letters` (dead-letters/),
 * which needs the jobs' users.
 */
import { joinedCheck, postgresCheck, runService } from '@trawl/streams';
import { createPool } from '@trawl/store';
import { startDeadLetterProjector } from './dead-letters/dead-letter-projector.ts';
import { startPgProjector } from './projector/live-projector.ts';

await runService('projector-pg', async (logger) => {
  // The job projection's concurrent partitions (4) and its setup, the dead-letter projection's.
  const pool = createPool({ applicationName: 'trawl-projector-pg', max: 10 });
  const projection = await startPgProjector({
    logger,
    pool,
    onSuperseded: (err) => {
      logger.fatal({ err }, 'a newer projection version took over the read models; stopping');
      void projection.stop().finally(() => process.exit(2));
    },
  });
  const deadLetters = await startDeadLetterProjector({ logger, pool });
  return {
    readiness: { projection: joinedCheck(projection.ready), 'dead-letters': joinedCheck(deadLetters.ready), postgres: postgresCheck(pool) },
    async stop() {
      await Promise.all([projection.stop(), deadLetters.stop()]);
      await pool.end();
    },
  };
});
