/** The projector-pg service: `npm start -w @trawl/projector-pg`. */
import { runService } from '@trawl/streams';
import { startPgProjector } from './projector/live-projector.ts';

await runService('projector-pg', async (logger) => {
  const projection = await startPgProjector({
    logger,
    onSuperseded: (err) => {
      logger.fatal({ err }, 'a newer projection version took over the read models; stopping');
      void projection.stop().finally(() => process.exit(2));
    },
  });
  return { stop: () => projection.stop() };
});
