/**
 * The webhooks service: `npm start -w @trawl/webhooks`. Migrates the webhook tables (the API does
 * too: either may start first) and provisions the topics, then consumes (webhook-service.ts).
 */
import { createKafka, provisionTopics, runService } from '@trawl/streams';
import { createPool, migrate, WEBHOOK_MIGRATION_OWNER, WEBHOOK_MIGRATIONS } from '@trawl/store';
import { webhookConfigFromEnv } from './config.ts';
import { startWebhookService } from './webhook-service.ts';

await runService('webhooks', async (logger) => {
  const config = webhookConfigFromEnv();
  const pool = createPool({ applicationName: 'trawl-webhooks', max: 20 });
  await migrate(pool, WEBHOOK_MIGRATION_OWNER, WEBHOOK_MIGRATIONS);
  const kafka = createKafka({ clientId: 'trawl-webhooks', logger });
  // The retry tiers and the dead-letter topic are new to a broker provisioned before this service existed.
  await provisionTopics(kafka);
  const service = await startWebhookService({ logger, pool, config, kafka });
  return {
    async stop() {
      await service.stop();
      await pool.end();
    },
  };
});
