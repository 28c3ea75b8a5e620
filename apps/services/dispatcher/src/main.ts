/**
 * The dispatcher service: a node-cron tick (TRAWL_DISPATCH_CRON, default every second) that
 * dispatches due schedules. Any number of replicas may run; SKIP LOCKED shares the work.
 */
import cron from 'node-cron';
import { createKafka, kafkaCheck, postgresCheck, startServiceProducer, runService } from '@trawl/streams';
import { CONFIG_MIGRATIONS, createPool, migrate } from '@trawl/store';
import { Dispatcher } from './dispatcher.ts';

await runService('dispatcher', async (logger) => {
  const pool = createPool({ applicationName: 'trawl-dispatcher', max: 4 });
  await migrate(pool, 'config', CONFIG_MIGRATIONS);
  const kafka = createKafka({ clientId: 'trawl-dispatcher', logger });
  const producer = await startServiceProducer({ kafka, logger, emits: ['TargetDue', 'JobDispatched'] });
  const dispatcher = new Dispatcher({ pool, producer, logger });

  let running: Promise<unknown> = Promise.resolve();
  const expr = process.env.TRAWL_DISPATCH_CRON ?? '* * * * * *';
  const task = cron.schedule(
    expr,
    () => {
      running = dispatcher.tick().catch((err: unknown) => logger.error({ err }, 'dispatch tick failed; retrying next tick'));
      return running as Promise<void>;
    },
    { name: 'dispatch', noOverlap: true },
  );
  logger.info({ cron: expr }, 'dispatching due schedules');

  return {
    readiness: { postgres: postgresCheck(pool), kafka: kafkaCheck(kafka) },
    async stop() {
      await task.stop();
      await running;
      await producer.disconnect();
      await pool.end();
    },
  };
});
