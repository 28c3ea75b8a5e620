/**
 * Webhook secrets are stored sealed (@trawl/store/secrets) and opened here to sign: the service
 * does not start without TRAWL_SECRETS_KEY, nor with a key that opens none of the stored secrets
 * (issue 32, item 7); either way before it consumes anything, saying what to do.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { migrate, WEBHOOK_MIGRATION_OWNER, WEBHOOK_MIGRATIONS } from '@trawl/store';
import { generateSecretsKey, parseSecretsKey, SecretBox, sealWebhookSecret } from '@trawl/store/secrets';
import { createTestDatabase, type TestDatabase } from '@trawl/store/testing';
import { runAppAtStart } from '@trawl/streams/testing';

let db: TestDatabase | undefined;
afterAll(() => db?.drop());

describe('the webhooks service at start, and the key of secrets at rest', () => {
  it('refuses to start without TRAWL_SECRETS_KEY, saying how to get one', async () => {
    const home = mkdtempSync(join(tmpdir(), 'trawl-no-key-'));
    const { code, log } = await runAppAtStart('webhooks', { TRAWL_HOME: home, TRAWL_SECRETS_KEY: '', TRAWL_SECRETS_OLD_KEYS: '', TRAWL_FETCH_ALLOW: '' });
    expect(code, log).toBe(1);
    expect(log).toContain('webhooks failed to start');
    expect(log).toContain('TRAWL_SECRETS_KEY is not set: the webhooks service keeps webhook secrets encrypted with it and does not start without it');
  }, 90_000);

  it('refuses to start with a key that does not open the stored secrets, naming both keys, and changes no row', async () => {
    db = await createTestDatabase('trawl_test_wrong_key');
    await migrate(db.pool, WEBHOOK_MIGRATION_OWNER, WEBHOOK_MIGRATIONS);
    const sealedWith = new SecretBox(parseSecretsKey(generateSecretsKey(), 'K'));
    const id = randomUUID();
    const sealed = sealWebhookSecret(sealedWith, id, `secret-${randomUUID()}`);
    await db.pool.query('INSERT INTO webhooks (id, user_id, url, events, secret) VALUES ($1, $2, $3, $4, $5)', [id, 'u', 'https://example.com/h', ['job.completed'], sealed]);
    const wrong = generateSecretsKey();
    const { code, log } = await runAppAtStart('webhooks', { DATABASE_URL: db.url, TRAWL_SECRETS_KEY: wrong, TRAWL_SECRETS_OLD_KEYS: '', TRAWL_FETCH_ALLOW: '', TRAWL_TOPIC_PREFIX: 'wrong-key-test.' });
    expect(code, log).toBe(1);
    expect(log).toContain(`webhook secrets are sealed under keys that are not configured (1 under key ${sealedWith.currentKeyId}); TRAWL_SECRETS_KEY is ${new SecretBox(parseSecretsKey(wrong, 'K')).currentKeyId}`);
    expect((await db.pool.query('SELECT secret FROM webhooks WHERE id = $1', [id])).rows[0].secret).toBe(sealed);
  }, 90_000);
});
