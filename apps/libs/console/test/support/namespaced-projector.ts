/**
 * projector-pg or projector-ch as a child process, like their main.ts but with the consumer group
 * in the pipeline's namespace (`consumerGroup()`, TRAWL_TOPIC_PREFIX). Their main.ts use fixed
 * group ids (`trawl-projection-<name>`), so two pipelines running at once on one broker share a
 * group: kafkajs then hands one pipeline's partitions to the other's projector, and this test's
 * events are never projected. Usage: `node --import tsx namespaced-projector.ts pg|ch`.
 */
import { consumerGroup, runService } from '@trawl/streams';
import { createPool } from '@trawl/store';
import { deadLetterProjectionName, projectionName as pgName, startDeadLetterProjector, startPgProjector } from '@trawl/projector-pg';
import { projectionName as chName, startChProjector } from '@trawl/projector-ch';

const which = process.argv[2];

if (which === 'pg') {
  await runService('projector-pg', async (logger) => {
    // As its main.ts: the job read models and the dead letters, on one pool.
    const pool = createPool({ applicationName: 'trawl-projector-pg', max: 10 });
    const projection = await startPgProjector({ logger, pool, groupId: consumerGroup(`trawl-projection-${pgName()}`) });
    const deadLetters = await startDeadLetterProjector({ logger, pool, groupId: consumerGroup(`trawl-projection-${deadLetterProjectionName()}`) });
    return {
      async stop() {
        await Promise.all([projection.stop(), deadLetters.stop()]);
        await pool.end();
      },
    };
  });
} else if (which === 'ch') {
  await runService('projector-ch', async (logger) => {
    const projector = await startChProjector({ logger, groupId: consumerGroup(`trawl-projection-${chName()}`) });
    return { stop: () => projector.stop() };
  });
} else {
  throw new Error('usage: namespaced-projector.ts pg|ch');
}
