/** The projector-ch service: `npm start -w @trawl/projector-ch`. */
import { runService } from '@trawl/streams';
import { startChProjector } from './projector/live-projector.ts';

await runService('projector-ch', async (logger) => {
  const projector = await startChProjector({
    logger,
    onSuperseded: () => {
      void projector.stop().finally(() => process.exit(2));
    },
  });
  return { stop: () => projector.stop() };
});
