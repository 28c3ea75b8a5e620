/**
 * The API service: `TRAWL_API_HOST`:`TRAWL_API_PORT` (127.0.0.1:3000). Migrates its own tables
 * (and the configuration model it writes), provisions the topics it produces to, connects the
 * producer and the live feed, then serves. Any number of instances may run behind a balancer:
 * dedupe lives in Postgres, and each instance has its own live subscription for its own sockets
 * (rate limits are per instance).
 */
import { describeExposures, egressPolicyFromEnv } from '@trawl/crawl';
import { createKafka, endpoints, startServiceProducer, runService, stackListeners, subscribeLive } from '@trawl/streams';
import { CONFIG_MIGRATIONS, createPool, migrate, purgeSettledLedger, WEBHOOK_MIGRATION_OWNER, WEBHOOK_MIGRATIONS } from '@trawl/store';
import { resealStoredCredentials, resealUserSecrets, resealWebhookSecrets, secretBoxFromEnv } from '@trawl/store/secrets';
import { buildApp } from './app.ts';
import { configFromEnv } from './config.ts';
import { purgeExpiredDedupe } from './crawl/submit-crawl.ts';
import { RetentionSweep } from './content/retention-sweep.ts';
import { API_MIGRATION_OWNER, API_MIGRATIONS } from './data/migrations.ts';
import { defaultReadinessChecks } from './health/readiness.ts';
import { mountServiceExtras } from './service-mount.ts';

const PURGE_EVERY_MS = 60 * 60 * 1000;

await runService('api', async (logger) => {
  // Webhook URLs are checked against the crawls' egress rules: an allow-list that opens the stack's
  // own ports (this API's included) stops the API here, before it connects anywhere, unless
  // TRAWL_FETCH_ALLOW_STACK=1. The routes read the same TRAWL_FETCH_ALLOW.
  const { exposures } = await egressPolicyFromEnv(stackListeners());
  if (exposures.length > 0) logger.warn({ exposures: describeExposures(exposures) }, 'TRAWL_FETCH_ALLOW opens ports of the stack to webhook URLs (TRAWL_FETCH_ALLOW_STACK=1)');
  const config = configFromEnv();
  // Webhook secrets are stored sealed: no key, no start (before anything connects).
  const secrets = secretBoxFromEnv(process.env, 'the API');
  const ep = endpoints();
  const pool = createPool({ applicationName: 'trawl-api', max: 20 });
  await migrate(pool, 'config', CONFIG_MIGRATIONS);
  await migrate(pool, API_MIGRATION_OWNER, API_MIGRATIONS);
  await migrate(pool, WEBHOOK_MIGRATION_OWNER, WEBHOOK_MIGRATIONS);
  // Clear secrets of an older table sealed, those under an old key moved to the current one; a
  // key that opens none of them stops the start here (README: Secrets at rest).
  const resealed = await resealWebhookSecrets(pool, secrets);
  if (resealed.sealed + resealed.resealed > 0) logger.info({ ...resealed, key: secrets.currentKeyId }, 'webhook secrets sealed under the current key');
  // Users' secrets under a key being rotated out (TRAWL_SECRETS_OLD_KEYS) move to the current one.
  const movedSecrets = await resealUserSecrets(pool, secrets);
  if (movedSecrets > 0) logger.info({ resealed: movedSecrets, key: secrets.currentKeyId }, 'user secrets sealed under the current key');
  // Credentials kept in websites, schedules and accepted crawls: clear ones (older rows) sealed, old keys' moved.
  const stored = await resealStoredCredentials(pool, secrets);
  if (stored.rows > 0) logger.info({ ...stored, key: secrets.currentKeyId }, 'stored credentials sealed under the current key');
  if (stored.unreadable > 0) logger.warn({ ...stored, key: secrets.currentKeyId }, 'stored credentials sealed under a key that is not configured (TRAWL_SECRETS_OLD_KEYS): their jobs fail their pages');
  const kafka = createKafka({ clientId: 'trawl-api', logger });
  const producer = await startServiceProducer({ kafka, logger, emits: ['CrawlRequested', 'JobDispatched', 'JobCancelled'] });

  const readiness = defaultReadinessChecks(pool, kafka, ep);
  const app = await buildApp({
    pool,
    producer,
    logger,
    config,
    secrets,
    readiness,
    subscribeLive: (options) => subscribeLive({ ...options, kafka, logger, groupPrefix: 'trawl-api-feed' }),
    mount: mountServiceExtras,
  });
  await app.listen({ host: config.host, port: config.port });
  logger.info({ url: `http://${config.host}:${config.port}`, docs: `http://${config.host}:${config.port}/docs` }, 'api listening');

  // Content past its retention: deleted by every instance's sweep (jobs are claimed one by one).
  const sweep = new RetentionSweep({ pool, store: app.content, config: config.contentRetention, logger });
  sweep.start();

  const purge = setInterval(() => {
    purgeExpiredDedupe(pool).catch((err: unknown) => logger.warn({ err }, 'could not purge expired dedupe keys'));
    purgeSettledLedger(pool).catch((err: unknown) => logger.warn({ err }, 'could not purge the quota ledger'));
  }, PURGE_EVERY_MS);
  purge.unref();

  return {
    // The operator port (runService) serves these: every check, and the API's own registry.
    readiness,
    metrics: app.metrics.registry,
    async stop() {
      clearInterval(purge);
      await sweep.stop();
      await app.close();
      await producer.disconnect();
      await pool.end();
    },
  };
});
