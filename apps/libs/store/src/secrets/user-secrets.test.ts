import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONFIG_MIGRATIONS } from '../config/migrations.ts';
import { migrate } from '../migrate.ts';
import { createTestDatabase, type TestDatabase } from '../testing/test-database.ts';
import { generateSecretsKey, isSealed, parseSecretsKey, SecretBox } from './secret-box.ts';
import { deleteUserSecret, listUserSecrets, putUserSecret, resealUserSecrets, resolveUserSecrets } from './user-secrets.ts';

let db: TestDatabase;
const newKey = () => parseSecretsKey(generateSecretsKey(), 'K');
const limits = { maxPerUser: 3, maxValueBytes: 100 };

beforeAll(async () => {
  db = await createTestDatabase('trawl_test_user_secrets');
  await migrate(db.pool, 'config', CONFIG_MIGRATIONS);
});
afterAll(() => db?.drop());

describe('user secrets', () => {
  it('keeps values sealed per user, lists names only, replaces, deletes; another user sees none', async () => {
    const box = new SecretBox(newKey());
    const first = await putUserSecret(db.pool, box, 'alice', 'token', 'value-one-1234', limits);
    expect(first).toMatchObject({ ok: true, created: true, secret: { name: 'token' } });
    const again = await putUserSecret(db.pool, box, 'alice', 'token', 'value-two-5678', limits);
    expect(again).toMatchObject({ ok: true, created: false });
    const { rows } = await db.pool.query<{ value: string }>("SELECT value FROM user_secrets WHERE user_id = 'alice'");
    expect(rows).toHaveLength(1);
    expect(isSealed(rows[0]!.value)).toBe(true);
    expect(rows[0]!.value).not.toContain('value-two');
    expect(await listUserSecrets(db.pool, 'alice')).toEqual([expect.objectContaining({ name: 'token' })]);
    expect(Object.keys((await listUserSecrets(db.pool, 'alice'))[0]!).sort()).toEqual(['created_at', 'name', 'updated_at']);
    expect(await resolveUserSecrets(db.pool, box, 'alice', ['token', 'other'])).toEqual(new Map([['token', 'value-two-5678']]));
    expect(await listUserSecrets(db.pool, 'bob')).toEqual([]);
    expect(await resolveUserSecrets(db.pool, box, 'bob', ['token'])).toEqual(new Map());
    expect(await deleteUserSecret(db.pool, 'bob', 'token')).toBe(false);
    // A row copied to another user does not open there.
    await db.pool.query("INSERT INTO user_secrets (user_id, name, value) SELECT 'mallory', name, value FROM user_secrets WHERE user_id = 'alice'");
    await expect(resolveUserSecrets(db.pool, box, 'mallory', ['token'])).rejects.toThrow(/does not open/);
    await db.pool.query("DELETE FROM user_secrets WHERE user_id = 'mallory'");
    expect(await deleteUserSecret(db.pool, 'alice', 'token')).toBe(true);
    expect(await listUserSecrets(db.pool, 'alice')).toEqual([]);
  });

  it('holds a user to the number of secrets, replacing one still allowed at the limit', async () => {
    const box = new SecretBox(newKey());
    for (const n of ['a', 'b', 'c']) expect((await putUserSecret(db.pool, box, 'carol', n, 'v', limits)).ok).toBe(true);
    expect(await putUserSecret(db.pool, box, 'carol', 'd', 'v', limits)).toEqual({ ok: false, used: 3 });
    expect((await putUserSecret(db.pool, box, 'carol', 'a', 'w', limits)).ok).toBe(true);
  });

  it('moves secrets sealed under an old key to the current one', async () => {
    const oldKey = newKey();
    await db.pool.query('DELETE FROM user_secrets');
    await putUserSecret(db.pool, new SecretBox(oldKey), 'dave', 'k', 'rotate-me', limits);
    const rotated = new SecretBox(newKey(), [oldKey]);
    expect(await resealUserSecrets(db.pool, rotated)).toBe(1);
    expect(await resealUserSecrets(db.pool, rotated)).toBe(0);
    expect(await resolveUserSecrets(db.pool, new SecretBox(newKey()), 'dave', []).then((m) => m.size)).toBe(0);
    const { rows } = await db.pool.query<{ value: string }>("SELECT value FROM user_secrets WHERE user_id = 'dave'");
    expect(rotated.isCurrent(rows[0]!.value)).toBe(true);
    expect(await resolveUserSecrets(db.pool, rotated, 'dave', ['k'])).toEqual(new Map([['k', 'rotate-me']]));
  });
});
