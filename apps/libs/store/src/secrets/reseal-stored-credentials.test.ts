import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONFIG_MIGRATIONS } from '../config/migrations.ts';
import { migrate } from '../migrate.ts';
import { createTestDatabase, type TestDatabase } from '../testing/test-database.ts';
import { generateSecretsKey, isSealed, parseSecretsKey, SecretBox } from './secret-box.ts';
import { openCredential } from './seal-credentials.ts';
import { resealStoredCredentials } from './reseal-stored-credentials.ts';

let db: TestDatabase;
const newKey = () => parseSecretsKey(generateSecretsKey(), 'K');

beforeAll(async () => {
  db = await createTestDatabase('trawl_test_stored_credentials');
  await migrate(db.pool, 'config', CONFIG_MIGRATIONS);
});
afterAll(() => db?.drop());

const row = async () => (await db.pool.query<{ headers: Record<string, unknown>; cookies: Record<string, unknown[]>; reach: { proxies: { password: unknown }[] } }>("SELECT headers, cookies, reach FROM websites WHERE id = 'legacy'")).rows[0]!;

describe('credentials kept in configuration rows', () => {
  it('seals the clear ones of an older row, keeps secrets by name, and moves them to a new key', async () => {
    await db.pool.query(
      `INSERT INTO websites (id, owner_id, name, base_url, headers, cookies, reach) VALUES ('legacy', 'u', 'L', 'https://a.test/', $1, $2, $3)`,
      [JSON.stringify({ 'x-token': 'clear-token-1', 'x-ref': { secret: 'named' } }), JSON.stringify({ 'a.test': ['sid=clear-cookie-1'] }), JSON.stringify({ proxies: [{ url: 'http://p.test:3128', username: null, password: 'clear-pass-1' }] })],
    );
    await db.pool.query(`INSERT INTO schedules (id, owner_id, request, interval_ms) VALUES ('s1', 'u', $1, 60000)`, [JSON.stringify({ start_urls: ['https://a.test/'], depth: 0, headers: { 'x-a': 'clear-sched-1' } })]);
    const oldKey = newKey();
    const first = new SecretBox(oldKey);
    expect(await resealStoredCredentials(db.pool, first)).toEqual({ rows: 2, unreadable: 0 });
    const text = JSON.stringify([await row(), (await db.pool.query('SELECT request FROM schedules')).rows]);
    for (const clear of ['clear-token-1', 'clear-cookie-1', 'clear-pass-1', 'clear-sched-1']) expect(text).not.toContain(clear);
    let r = await row();
    expect(r.headers['x-ref']).toEqual({ secret: 'named' });
    expect(openCredential(first, r.headers['x-token'] as string)).toBe('clear-token-1');
    expect(openCredential(first, r.cookies['a.test']![0] as string)).toBe('sid=clear-cookie-1');
    expect(openCredential(first, r.reach.proxies[0]!.password as string)).toBe('clear-pass-1');
    expect(await resealStoredCredentials(db.pool, first)).toEqual({ rows: 0, unreadable: 0 });

    const rotated = new SecretBox(newKey(), [oldKey]);
    expect(await resealStoredCredentials(db.pool, rotated)).toEqual({ rows: 2, unreadable: 0 });
    r = await row();
    expect(rotated.isCurrent(r.headers['x-token'] as string)).toBe(true);
    expect(openCredential(rotated, r.cookies['a.test']![0] as string)).toBe('sid=clear-cookie-1');
    // A key that opens none of them leaves them as they are, counted.
    expect(await resealStoredCredentials(db.pool, new SecretBox(newKey()))).toEqual({ rows: 0, unreadable: 4 });
    expect(isSealed((await row()).headers['x-token'] as string)).toBe(true);
  });
});
