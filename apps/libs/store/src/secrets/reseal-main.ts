/**
 * `npm run secrets:reseal -w @trawl/store`: brings every webhook secret to the current key
 * (TRAWL_SECRETS_KEY), sealing clear ones and re-sealing those under TRAWL_SECRETS_OLD_KEYS, then
 * prints how many rows each key still holds. The API and the webhooks service do the same at
 * start; this is for a rotation without a restart, and to see when an old key can go.
 */
import { createPool } from '../pool.ts';
import { migrate } from '../migrate.ts';
import { WEBHOOK_MIGRATION_OWNER, WEBHOOK_MIGRATIONS } from '../webhooks/migrations.ts';
import { secretBoxFromEnv } from './secrets-config.ts';
import { resealWebhookSecrets, webhookSecretKeys } from './webhook-secrets.ts';

const box = secretBoxFromEnv(process.env, 'secrets:reseal');
const pool = createPool({ applicationName: 'trawl-secrets-reseal', max: 2 });
try {
  await migrate(pool, WEBHOOK_MIGRATION_OWNER, WEBHOOK_MIGRATIONS);
  const report = await resealWebhookSecrets(pool, box);
  const keys = [...(await webhookSecretKeys(pool))].map(([kid, n]) => `${kid}${kid === box.currentKeyId ? ' (current)' : ''}: ${n}`);
  console.log(`webhook secrets: ${report.sealed} sealed, ${report.resealed} re-sealed under key ${box.currentKeyId}; rows per key: ${keys.join(', ') || 'none'}`);
} catch (err) {
  console.error(`secrets:reseal: ${(err as Error).message}`);
  process.exitCode = 1;
} finally {
  await pool.end();
}
