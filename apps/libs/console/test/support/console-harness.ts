/**
 * The console plugin on a Fastify app shaped like apps/services/api: a `dependencies` plugin that
 * decorates `db` (a throw-away Postgres database with projector-pg's read models and the API's
 * `api_jobs`), and an `auth` plugin whose `authenticate` maps Bearer tokens to users — the
 * contract the plugin relies on (src/server/host-app.ts). The real API is exercised end to end in
 * console.e2e.test.ts; here the routes are tested against the real ClickHouse, Kafka and Postgres.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import { createTestDatabase, type TestDatabase } from '@trawl/store/testing';
import { setupReadModels } from '@trawl/projector-pg';
import trawlConsole, { type ConsoleOptions } from '../../src/index.ts';

export interface ConsoleHarness {
  readonly app: FastifyInstance;
  readonly db: TestDatabase;
  /** Authorization header of a user (any token `t-<user>` is that user). */
  auth(user: string): { authorization: string };
  /** Records that `user` owns `jobId`, as projector-pg would. */
  ownJob(user: string, jobId: string): Promise<void>;
  close(): Promise<void>;
}

export async function consoleHarness(options: ConsoleOptions = {}): Promise<ConsoleHarness> {
  const db = await createTestDatabase('trawl_console_test');
  await setupReadModels(db.pool);
  await db.pool.query(`CREATE TABLE IF NOT EXISTS api_jobs (job_id text PRIMARY KEY, user_id text NOT NULL, dedupe_key text NOT NULL, request jsonb NOT NULL, requested_at timestamptz NOT NULL DEFAULT now())`);
  // Like the API's validator: query strings coerced, unknown fields refused (not silently dropped).
  const app = Fastify({ logger: false, ajv: { customOptions: { removeAdditional: false, coerceTypes: 'array', useDefaults: true } } });
  await app.register(fp(async (f) => void f.decorate('db', db.pool), { name: 'dependencies' }));
  await app.register(
    fp(
      async (f) => {
        f.decorateRequest('userId', '');
        f.decorate('authenticate', async (request: FastifyRequest) => {
          const token = /^Bearer t-(\S+)$/.exec(request.headers.authorization ?? '')?.[1];
          if (!token) throw Object.assign(new Error('unknown or revoked API key'), { statusCode: 401 });
          request.userId = token;
        });
      },
      { name: 'auth' },
    ),
  );
  await app.register(trawlConsole, { distDir: mkdtempSync(join(tmpdir(), 'trawl-console-dist-')), ...options });
  await app.ready();
  return {
    app,
    db,
    auth: (user) => ({ authorization: `Bearer t-${user}` }),
    async ownJob(user, jobId) {
      await db.pool.query(`INSERT INTO jobs (job_id, user_id, status, updated_at) VALUES ($1, $2, 'finished', now())`, [jobId, user]);
    },
    async close() {
      await app.close();
      await db.drop();
    },
  };
}
