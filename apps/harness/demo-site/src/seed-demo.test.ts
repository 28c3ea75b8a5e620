import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CONFIG_MIGRATIONS, getTarget, getWebsite, listSchedules, migrate, searchUrl } from '@trawl/store';
import { createTestDatabase, type TestDatabase } from '@trawl/store/testing';
import { DEMO_TARGET_ID, DEMO_WEBSITE_ID, seedDemo } from './seed-demo.ts';

let db: TestDatabase;
beforeAll(async () => {
  db = await createTestDatabase();
  await migrate(db.pool, 'config', CONFIG_MIGRATIONS);
});
afterAll(async () => db?.drop());

describe('demo seed', () => {
  it('loads the demo website and target, and can run again', async () => {
    await seedDemo(db.pool, 'http://127.0.0.1:8090');
    await seedDemo(db.pool, 'http://127.0.0.1:8090');
    const website = await getWebsite(db.pool, DEMO_WEBSITE_ID);
    expect(website?.item_root).toBe('article.job');
    expect(website?.pagination_type).toBe('next_link');
    const target = await getTarget(db.pool, DEMO_TARGET_ID);
    expect(searchUrl(target!)).toBe('http://127.0.0.1:8090/jobs?q=engineer');
    const { rows } = await db.pool.query('SELECT count(*)::int AS n FROM schedules WHERE target_id = $1', [DEMO_TARGET_ID]);
    expect(rows[0].n).toBe(1);
    expect(await listSchedules(db.pool, 'nobody')).toEqual([]);
  });
});
