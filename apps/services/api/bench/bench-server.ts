/**
 * The API as the latency bench measures it: a separate process (so the load generator does not
 * share its event loop), on a throw-away database of the real Postgres, the real Kafka producer
 * and live feed, rate limits out of the way. Prints `{"url","key"}` on stdout once listening;
 * drops its database on SIGTERM.
 */
import trawlConsole from '@trawl/console';
import { EventProducer, createKafka, createLogger, provisionTopics, subscribeLive } from '@trawl/streams';
import { CONFIG_MIGRATIONS, migrate } from '@trawl/store';
import { createTestDatabase } from '@trawl/store/testing';
import { setupReadModels } from '@trawl/projector-pg';
import { buildApp } from '../src/app.ts';
import { createApiKey } from '../src/data/api-keys.ts';
import { API_MIGRATION_OWNER, API_MIGRATIONS } from '../src/data/migrations.ts';

const logger = createLogger('api-bench', { TRAWL_LOG_LEVEL: 'warn' });
const db = await createTestDatabase('trawl_api_bench');
await migrate(db.pool, 'config', CONFIG_MIGRATIONS);
await migrate(db.pool, API_MIGRATION_OWNER, API_MIGRATIONS);
await setupReadModels(db.pool);
const kafka = createKafka({ clientId: 'api-bench', logger });
await provisionTopics(kafka);
const producer = new EventProducer({ kafka, logger });
await producer.connect();
const app = await buildApp({
  pool: db.pool,
  mount: (app) => app.register(trawlConsole),
  producer,
  config: { rateLimitMax: 10_000_000, crawlRateLimitMax: 10_000_000 },
  subscribeLive: (o) => subscribeLive({ ...o, kafka, logger, groupPrefix: 'trawl-api-bench' }),
});
const url = await app.listen({ host: '127.0.0.1', port: 0 });
await app.liveFeed.ready;
await new Promise((r) => setTimeout(r, 1_500));
const { key } = await createApiKey(db.pool, 'bench');
process.stdout.write(JSON.stringify({ url, key }) + '\n');

process.on('SIGTERM', () => {
  void (async () => {
    await app.close();
    await producer.disconnect();
    await db.drop();
    process.exit(0);
  })();
});
