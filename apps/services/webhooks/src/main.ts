/**
 * The webhooks service: `npm start -w @trawl/webhooks`. Migrates the webhook tables (the API does
 * too: either may start first) and provisions the topics, then consumes (webhook-service.ts).
 */
import { describeExposures, egressPolicyFromEnv } from '@trawl/crawl';
import { checkDelivery, createKafka, EVENT_DELIVERY, provisionTopics, runService, stackListeners } from '@trawl/streams';
import { createPool, migrate, WEBHOOK_MIGRATION_OWNER, WEBHOOK_MIGRATIONS } from '@trawl/store';
import { resealWebhookSecrets, secretBoxFromEnv } from '@trawl/store/secrets';
import { webhookConfigFromEnv } from './config.ts';
import { startWebhookService } from './webhook-service.ts';

await runService('webhooks', async (logger) => {
  // Deliveries obey the crawls' egress rules: an allow-list that opens the stack's own ports stops
  // the service here, before it connects anywhere (unless TRAWL_FETCH_ALLOW_STACK=1).
  const { policy: egress, exposures } = await egressPolicyFromEnv(stackListeners());
  if (exposures.length > 0) logger.warn({ exposures: describeExposures(exposures) }, 'TRAWL_FETCH_ALLOW opens ports of the stack to webhook deliveries (TRAWL_FETCH_ALLOW_STACK=1)');
  const config = webhookConfigFromEnv();
  // Secrets are stored sealed and opened here to sign: no key, no start (before anything connects).
  const secrets = secretBoxFromEnv(process.env, 'the webhooks service');
  const pool = createPool({ applicationName: 'trawl-webhooks', max: 20 });
  await migrate(pool, WEBHOOK_MIGRATION_OWNER, WEBHOOK_MIGRATIONS);
  // As the API does at its start: every secret under the current key, or a clear error naming the keys.
  const resealed = await resealWebhookSecrets(pool, secrets);
  if (resealed.sealed + resealed.resealed > 0) logger.info({ ...resealed, key: secrets.currentKeyId }, 'webhook secrets sealed under the current key');
  const kafka = createKafka({ clientId: 'trawl-webhooks', logger });
  // The retry tiers and the dead-letter topic are new to a broker provisioned before this service existed.
  const topics = await provisionTopics(kafka);
  // Its retries and dead letters go out with EventProducer's settings: checked before the first.
  checkDelivery(EVENT_DELIVERY, topics.topics);
  const service = await startWebhookService({ logger, pool, config, kafka, egress, secrets });
  return {
    async stop() {
      await service.stop();
      await pool.end();
    },
  };
});
