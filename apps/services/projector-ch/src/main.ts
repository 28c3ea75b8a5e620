/** The projector-ch service: `npm start -w @trawl/projector-ch`. */
import { endpoints, httpCheck, joinedCheck, runService } from '@trawl/streams';
import { startChProjector } from './projector/live-projector.ts';

/** TRAWL_CH_FLUSH_QUIET_MS: flush once the events stop for this long (default 200; 0: off). */
function quietMs(): number | undefined {
  const raw = process.env.TRAWL_CH_FLUSH_QUIET_MS;
  if (raw === undefined || raw === '') return undefined;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 0) throw new Error(`TRAWL_CH_FLUSH_QUIET_MS must be a whole number of milliseconds (0 turns it off), got "${raw}"`);
  return n;
}

await runService('projector-ch', async (logger) => {
  const projector = await startChProjector({
    logger,
    quietMs: quietMs(),
    onSuperseded: () => {
      void projector.stop().finally(() => process.exit(2));
    },
  });
  return {
    readiness: { consumer: joinedCheck(projector.consumer.ready), clickhouse: httpCheck(`${endpoints().clickhouseUrl}/ping`) },
    stop: () => projector.stop(),
  };
});
