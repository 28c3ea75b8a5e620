/**
 * Failed authentications cost Postgres nothing past a budget: rate limits run before the key
 * lookup, per client address, and unknown keys are remembered. The lookups are counted on the
 * real pool (every query the app sends through it), not on a stand-in.
 */
import trawlConsole from '@trawl/console';
import { randomBytes } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildApp } from '../src/app.ts';
import { countingPool, startTestApi, type TestApi } from './support.ts';

let api: TestApi;
beforeAll(async () => {
  api = await startTestApi();
});
afterAll(async () => {
  await api?.close();
});

const madeUpKey = () => `trawl_${randomBytes(32).toString('base64url')}`;

async function appWith(config: Parameters<typeof buildApp>[0]['config']): Promise<{ app: FastifyInstance; lookups: () => number }> {
  const { pool, count: lookups } = countingPool(api.db.pool, (sql) => sql.includes('FROM api_keys'));
  const app = await buildApp({ pool, producer: api.producer, config, mount: (app) => app.register(trawlConsole) });
  await app.ready();
  return { app, lookups };
}

describe('authentication floods', () => {
  it('600 made-up keys from one address: 429s appear and Postgres sees at most the failure limit in lookups', async () => {
    const limit = 60;
    const { app, lookups } = await appWith({ authFailureLimit: limit });
    try {
      const statuses: number[] = [];
      const retryAfter: number[] = [];
      // Waves of 50 at once: the budget must hold against concurrent lookups too.
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
      expect(count(401) + count(429)).toBe(600);
      expect(count(429)).toBeGreaterThan(0);
      expect(lookups()).toBeGreaterThan(0);
      expect(lookups()).toBeLessThanOrEqual(limit);
      expect(Math.min(...retryAfter)).toBeGreaterThan(0);

      // Another address is not affected; the flooded one gets 429 for a key it would have to look up.
      const good = await api.user('flood');
      expect((await app.inject({ method: 'GET', url: '/jobs', remoteAddress: '198.51.100.4', headers: good.auth })).statusCode).toBe(200);
      const other = await api.user('flood');
      expect((await app.inject({ method: 'GET', url: '/jobs', remoteAddress: '203.0.113.9', headers: other.auth })).statusCode).toBe(429);
      // …while a key it already proved good (cached) keeps working from there.
      expect((await app.inject({ method: 'GET', url: '/jobs', remoteAddress: '203.0.113.9', headers: good.auth })).statusCode).toBe(200);
    } finally {
      await app.close();
    }
  });

  it('one unknown key from many addresses is looked up once', async () => {
    const { app, lookups } = await appWith({ unknownKeyCacheMs: 60_000 });
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
      expect(lookups()).toBe(1);
    } finally {
      await app.close();
    }
  });

  it('good keys looked up from one address do not use up its failure budget', async () => {
    const { app, lookups } = await appWith({ authFailureLimit: 3, keyCacheMs: 0 });
    try {
      const users = await Promise.all(Array.from({ length: 10 }, () => api.user('nat')));
      for (let round = 0; round < 3; round++) {
        for (const u of users) expect((await app.inject({ method: 'GET', url: '/jobs', remoteAddress: '203.0.113.50', headers: u.auth })).statusCode).toBe(200);
      }
      expect(lookups()).toBe(30);
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
      expect(lookups()).toBe(5);
    } finally {
      await app.close();
    }
  });
});
