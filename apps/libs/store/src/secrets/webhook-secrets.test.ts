import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { migrate } from '../migrate.ts';
import { createTestDatabase, type TestDatabase } from '../testing/test-database.ts';
import { WEBHOOK_MIGRATION_OWNER, WEBHOOK_MIGRATIONS } from '../webhooks/migrations.ts';
import { generateSecretsKey, parseSecretsKey, SecretBox, SecretUnreadableError } from './secret-box.ts';
import { openWebhookSecret, resealWebhookSecrets, sealWebhookSecret, webhookSecretKeys } from './webhook-secrets.ts';

let db: TestDatabase;
const newKey = () => parseSecretsKey(generateSecretsKey(), 'K');

beforeAll(async () => {
  db = await createTestDatabase('trawl_test_secrets');
  await migrate(db.pool, WEBHOOK_MIGRATION_OWNER, WEBHOOK_MIGRATIONS);
});
afterAll(() => db?.drop());

async function insert(secret: string, id = randomUUID()): Promise<string> {
  await db.pool.query('INSERT INTO webhooks (id, user_id, url, events, secret) VALUES ($1, $2, $3, $4, $5)', [id, 'u', 'https://example.com/h', ['job.completed'], secret]);
  return id;
}

const stored = async (id: string): Promise<string> => (await db.pool.query<{ secret: string }>('SELECT secret FROM webhooks WHERE id = $1', [id])).rows[0]!.secret;

describe('webhook secrets at rest', () => {
  it('seals the clear secrets of an older table in place, and rotates them from an old key to the new one', async () => {
    await db.pool.query('DELETE FROM webhooks');
    const clear = Array.from({ length: 3 }, (_, i) => `legacy-secret-${i}-${randomUUID()}`);
    const ids = await Promise.all(clear.map((s) => insert(s)));
    const oldKey = newKey();
    const first = new SecretBox(oldKey);

    expect(await resealWebhookSecrets(db.pool, first)).toEqual({ sealed: 3, resealed: 0 });
    for (const [i, id] of ids.entries()) {
      const text = await stored(id);
      expect(text).not.toContain(clear[i]);
      expect(openWebhookSecret(first, id, text)).toBe(clear[i]);
    }
    // Idempotent: nothing left to do under the same key.
    expect(await resealWebhookSecrets(db.pool, first)).toEqual({ sealed: 0, resealed: 0 });

    const currentKey = newKey();
    const rotated = new SecretBox(currentKey, [oldKey]);
    expect(await resealWebhookSecrets(db.pool, rotated)).toEqual({ sealed: 0, resealed: 3 });
    expect(await webhookSecretKeys(db.pool)).toEqual(new Map([[rotated.currentKeyId, 3]]));
    // The old key can go now: the new one alone opens every row.
    const alone = new SecretBox(currentKey);
    for (const [i, id] of ids.entries()) expect(openWebhookSecret(alone, id, await stored(id))).toBe(clear[i]);
  });

  it('refuses to start on a key that does not open the table, naming the keys, and changes nothing', async () => {
    await db.pool.query('DELETE FROM webhooks');
    const box = new SecretBox(newKey());
    const id = await insert(sealWebhookSecret(box, randomUUID(), 'placeholder'));
    await db.pool.query('UPDATE webhooks SET secret = $2 WHERE id = $1', [id, sealWebhookSecret(box, id, 'the-real-secret-0123')]);
    const clearId = await insert('a-clear-one-0123456789');
    const before = [await stored(id), await stored(clearId)];

    const wrong = new SecretBox(newKey());
    const err = await resealWebhookSecrets(db.pool, wrong).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SecretUnreadableError);
    expect((err as Error).message).toContain(`1 under key ${box.currentKeyId}`);
    expect((err as Error).message).toContain(`TRAWL_SECRETS_KEY is ${wrong.currentKeyId}`);
    expect([await stored(id), await stored(clearId)]).toEqual(before);
    expect(() => openWebhookSecret(wrong, id, before[0]!)).toThrow(SecretUnreadableError);
  });
});

