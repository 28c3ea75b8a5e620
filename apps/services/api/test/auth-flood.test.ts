/**
 * Failed authentications cost Postgres nothing: a presented key is looked up in the in-memory
 * key index (src/auth/key-index.ts), so a made-up key is answered without a query, and the
 * per-address failure budget, which still slows guessing down, never stands in a valid key's way.
 * Queries are counted on the real pool (every one the app sends through it), not on a stand-in.
 */
import trawlConsole from '@trawl/console';
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.ts';
import { countingPool, keyKnown, startTestApi, type TestApi } from './support.ts';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api?.close();
});

const madeUpKey = () => `trawl_${randomBytes(32).toString('base64url')}`;

/** An app whose queries of `api_keys` are counted from the moment it is ready (its first load of the index before that). */
async function appWith(config: Parameters<typeof buildApp>[0]['config']): Promise<{ app: FastifyInstance; lookups: () => number }> {
  const { pool, count } = countingPool(api.db.pool, (sql) => sql.includes('FROM api_keys'));
  const app = await buildApp({ pool, producer: api.producer, config, mount: (app) => app.register(trawlConsole) });
  await app.ready();
  const loaded = count();
  return { app, lookups: () => count() - loaded };
}

/** A new user whose key both the test's app and `app` know. */
async function userOn(app: FastifyInstance, prefix: string) {
  const user = await api.user(prefix);
  await keyKnown(app, user.key);
  return user;
}

describe('authentication floods', () => {
  it('600 made-up keys from one address: 429s appear, Postgres sees no lookup, and a valid key from that address still gets in', async () => {
    const limit = 60;
    const { app, lookups } = await appWith({ authFailureLimit: limit });
    try {
      const statuses: number[] = [];
      const retryAfter: number[] = [];
      // Waves of 50 at once: the budget must hold against concurrent requests too.
      for (let wave = 0; wave < 12; wave++) {
        const answers = await Promise.all(
          Array.from({ length: 50 }, () =>
            app.inject({ method: 'GET', url: '/jobs', remoteAddress: '203.0.113.9', headers: { authorization: `Bearer ${madeUpKey()}` } }),
          ),
        );
        for (const a of answers) {
          statuses.push(a.statusCode);
          if (a.statusCode === 429) {
            expect(a.json().error.code).toBe('RATE_LIMITED');
            retryAfter.push(Number(a.headers['retry-after']));
          } else {
            expect(a.json().error.code).toBe('UNAUTHENTICATED');
          }
        }
      }
      const count = (s: number) => statuses.filter((x) => x === s).length;
      process.stdout.write(`FLOOD ${JSON.stringify({ requests: statuses.length, unauthenticated: count(401), rate_limited: count(429), lookups: lookups(), limit })}\n`);
      expect(count(401)).toBe(limit);
      expect(count(429)).toBe(600 - limit);
      expect(lookups()).toBe(0);
      expect(Math.min(...retryAfter)).toBeGreaterThan(0);

      // Another address is not affected…
      const good = await userOn(app, 'flood');
      expect((await app.inject({ method: 'GET', url: '/jobs', remoteAddress: '198.51.100.4', headers: good.auth })).statusCode).toBe(200);
      // …and neither is a valid key from the flooded one, used there for the first time.
      const other = await userOn(app, 'flood');
      expect((await app.inject({ method: 'GET', url: '/jobs', remoteAddress: '203.0.113.9', headers: other.auth })).statusCode).toBe(200);
      expect((await app.inject({ method: 'GET', url: '/jobs', remoteAddress: '203.0.113.9', headers: good.auth })).statusCode).toBe(200);
      expect(lookups()).toBe(0);
    } finally {
      await app.close();
    }
  });

  it('one unknown key from many addresses costs no lookup', async () => {
    const { app, lookups } = await appWith({});
    try {
      const key = madeUpKey();
      for (let i = 0; i < 20; i++) {
        const answers = await Promise.all(
          Array.from({ length: 10 }, (_, j) =>
            app.inject({ method: 'GET', url: '/jobs', remoteAddress: `192.0.2.${i * 10 + j + 1}`, headers: { authorization: `Bearer ${key}` } }),
          ),
        );
        for (const a of answers) expect(a.statusCode).toBe(401);
      }
      expect(lookups()).toBe(0);
    } finally {
      await app.close();
    }
  });

  it('good keys from one address never use up its failure budget, and cost no lookup', async () => {
    const { app, lookups } = await appWith({ authFailureLimit: 3 });
    try {
      const users = [];
      for (let i = 0; i < 10; i++) users.push(await userOn(app, 'nat'));
      for (let round = 0; round < 3; round++) {
        for (const u of users) expect((await app.inject({ method: 'GET', url: '/jobs', remoteAddress: '203.0.113.50', headers: u.auth })).statusCode).toBe(200);
      }
      expect(lookups()).toBe(0);
    } finally {
      await app.close();
    }
  });

  it('requests without a key count as failures of their address too', async () => {
    const { app, lookups } = await appWith({ authFailureLimit: 5 });
    try {
      const codes = [];
      for (let i = 0; i < 8; i++) codes.push((await app.inject({ method: 'GET', url: '/jobs', remoteAddress: '203.0.113.77' })).statusCode);
      expect(codes).toEqual([401, 401, 401, 401, 401, 429, 429, 429]);
      expect(lookups()).toBe(0);
    } finally {
      await app.close();
    }
  });

  it('an IPv6 client is one address per /64', async () => {
    const { app, lookups } = await appWith({ authFailureLimit: 5 });
    try {
      const codes = [];
      for (let i = 1; i <= 8; i++) {
        codes.push((await app.inject({ method: 'GET', url: '/jobs', remoteAddress: `2001:db8:7:7::${i.toString(16)}`, headers: { authorization: `Bearer ${madeUpKey()}` } })).statusCode);
      }
      expect(codes).toEqual([401, 401, 401, 401, 401, 429, 429, 429]);
      expect(lookups()).toBe(0);
    } finally {
      await app.close();
    }
  });
});
