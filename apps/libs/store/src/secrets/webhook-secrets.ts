/**
 * Webhook signing secrets in `webhooks.secret`, sealed (secret-box.ts) with the webhook's id as
 * context: the API seals what a user gives, apps/services/webhooks opens it to sign a delivery.
 *
 * `resealWebhookSecrets` is the step that brings the table to the current key, run at the start of
 * the API and of the webhooks service (after their migrations) and by `npm run secrets:reseal -w
 * @trawl/store`: a clear secret (written before secrets were sealed) is sealed, one sealed under an
 * old key is sealed again under the current one. It first checks that every key the table uses is
 * configured, and changes nothing when one is not: a service started with the wrong key says so at
 * once instead of failing its deliveries one by one. Rows are resealed in batches, each batch in
 * its own transaction under an advisory lock, so replicas starting together do the work once.
 */
import type { Pool } from '../pool.ts';
import { isSealed, sealedKeyId, SEALED_SQL_PATTERN, SecretUnreadableError, type SecretBox } from './secret-box.ts';

/** The context a webhook's secret is sealed under. */
export function webhookSecretContext(webhookId: string): string {
  return `webhooks.secret:${webhookId}`;
}

export function sealWebhookSecret(box: SecretBox, webhookId: string, secret: string): string {
  return box.seal(secret, webhookSecretContext(webhookId));
}

export function openWebhookSecret(box: SecretBox, webhookId: string, sealed: string): string {
  return box.open(sealed, webhookSecretContext(webhookId));
}

export interface ResealReport {
  /** Clear secrets sealed now. */
  readonly sealed: number;
  /** Secrets moved from an old key to the current one. */
  readonly resealed: number;
}

const BATCH = 500;

/** Rows per key id (`clear` for unsealed ones): what a rotation still has to move. */
export async function webhookSecretKeys(pool: Pool): Promise<Map<string, number>> {
  const { rows } = await pool.query<{ kid: string; n: number }>(
    `SELECT CASE WHEN secret ~ $1 THEN split_part(secret, '.', 2) ELSE 'clear' END AS kid, count(*)::int AS n
     FROM webhooks GROUP BY 1`,
    [SEALED_SQL_PATTERN],
  );
  return new Map(rows.map((r) => [r.kid, r.n]));
}

export async function resealWebhookSecrets(pool: Pool, box: SecretBox): Promise<ResealReport> {
  const unknown = [...(await webhookSecretKeys(pool))].filter(([kid]) => kid !== 'clear' && !box.opens(kid));
  if (unknown.length > 0) {
    const list = unknown.map(([kid, n]) => `${n} under key ${kid}`).join(', ');
    throw new SecretUnreadableError(
      `webhook secrets are sealed under keys that are not configured (${list}); TRAWL_SECRETS_KEY is ${box.currentKeyId}. ` +
        'Set TRAWL_SECRETS_KEY to the key they were sealed with, or list it in TRAWL_SECRETS_OLD_KEYS to rotate',
    );
  }
  let sealed = 0;
  let resealed = 0;
  for (;;) {
    const client = await pool.connect();
    let done = 0;
    try {
      await client.query('BEGIN');
      await client.query("SELECT pg_advisory_xact_lock(hashtext('trawl-secrets:webhooks'))");
      const { rows } = await client.query<{ id: string; secret: string }>(
        'SELECT id, secret FROM webhooks WHERE secret NOT LIKE $1 ORDER BY id LIMIT $2 FOR UPDATE',
        [`tsec1.${box.currentKeyId}.%`, BATCH],
      );
      for (const r of rows) {
        const plain = isSealed(r.secret) ? openWebhookSecret(box, r.id, r.secret) : r.secret;
        await client.query('UPDATE webhooks SET secret = $2 WHERE id = $1', [r.id, sealWebhookSecret(box, r.id, plain)]);
        if (sealedKeyId(r.secret) === undefined) sealed++;
        else resealed++;
      }
      await client.query('COMMIT');
      done = rows.length;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
    if (done < BATCH) return { sealed, resealed };
  }
}
