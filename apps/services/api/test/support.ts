/**
 * One API per test file against the real stack: a throw-away database with the API's tables, the
 * configuration model and the read models, dead letters included (created by projector-pg's own
 * setup), a real producer
 * on the local Kafka, and optionally the real live subscription.
 */
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { WebSocket } from 'ws';
import trawlConsole from '@trawl/console';
import { EventProducer, provisionTopics, subscribeLive, type Logger } from '@trawl/streams';
import { testKafka, testLogger } from '@trawl/streams/testing';
import { CONFIG_MIGRATIONS, migrate, WEBHOOK_MIGRATION_OWNER, WEBHOOK_MIGRATIONS, type Pool } from '@trawl/store';
import { createTestDatabase, type TestDatabase } from '@trawl/store/testing';
import { setupDeadLetters, setupReadModels } from '@trawl/projector-pg';
import type { ContentStore } from '@trawl/content';
import { buildApp } from '../src/app.ts';
import type { ApiConfig } from '../src/config.ts';
import { API_MIGRATION_OWNER, API_MIGRATIONS } from '../src/data/migrations.ts';
import { createApiKey, hashApiKey } from '../src/data/api-keys.ts';

export interface TestApi {
  readonly app: FastifyInstance;
  readonly db: TestDatabase;
  readonly producer: EventProducer;
  readonly logger: Logger;
  readonly kafka: ReturnType<typeof testKafka>;
  /** What the app produced, in order: event names, and `raw:<topic>` for re-driven bytes. */
  readonly emitted: readonly string[];
  /** The events the app produced, with their bodies. */
  readonly sent: readonly { readonly name: string; readonly body: Record<string, unknown> }[];
  /** A new user with a key: `{ user, key, auth }` where auth is the header object. */
  user(prefix?: string): Promise<{ user: string; key: string; auth: { authorization: string } }>;
  close(): Promise<void>;
}

export interface TestApiOptions {
  /** The content store (a test bucket); default: the one TRAWL_S3_URL names. */
  readonly content?: ContentStore;
  readonly config?: Partial<ApiConfig>;
  /** Start the real live subscription (WebSocket feed tests). */
  readonly live?: boolean;
  /** The app's pino logger (silent when absent). */
  readonly logger?: Logger;
}

export async function startTestApi(options: TestApiOptions = {}): Promise<TestApi> {
  const logger = testLogger('api-test');
  const db = await createTestDatabase('trawl_api_test');
  await migrate(db.pool, 'config', CONFIG_MIGRATIONS);
  await migrate(db.pool, API_MIGRATION_OWNER, API_MIGRATIONS);
  await migrate(db.pool, WEBHOOK_MIGRATION_OWNER, WEBHOOK_MIGRATIONS);
  await setupReadModels(db.pool);
  await setupDeadLetters(db.pool);
  const kafka = testKafka('api-test', logger);
  await provisionTopics(kafka);
  const producer = new EventProducer({ kafka, logger });
  await producer.connect();
  // The real producer, with a record of what goes through it (to prove a refused request sent nothing).
  const emitted: string[] = [];
  const sent: { name: string; body: Record<string, unknown> }[] = [];
  const recordingProducer: Pick<EventProducer, 'emit' | 'sendRaw'> = {
    emit: (name, body, emitOptions) => {
      emitted.push(name);
      sent.push({ name, body: body as unknown as Record<string, unknown> });
      return producer.emit(name, body, emitOptions);
    },
    sendRaw: (message) => {
      emitted.push(`raw:${message.topic}`);
      return producer.sendRaw(message);
    },
  };
  const app = await buildApp({
    pool: db.pool,
    producer: recordingProducer,
    mount: (app) => app.register(trawlConsole),
    config: options.config ?? {},
    ...(options.content ? { content: options.content } : {}),
    ...(options.logger ? { logger: options.logger } : {}),
    ...(options.live ? { subscribeLive: (o) => subscribeLive({ ...o, kafka, logger, groupPrefix: 'trawl-api-test' }) } : {}),
  });
  await app.ready();
  return {
    app,
    db,
    producer,
    logger,
    kafka,
    emitted,
    sent,
    async user(prefix = 'user') {
      const user = `${prefix}-${randomUUID().slice(0, 8)}`;
      const { key } = await createApiKey(db.pool, user);
      // A new key is usable once its notification has reached the app's index (milliseconds).
      await keyKnown(app, key);
      return { user, key, auth: { authorization: `Bearer ${key}` } };
    },
    async close() {
      await app.close();
      await producer.disconnect();
      await db.drop();
    },
  };
}

/**
 * The real pool, counting the queries that go through it and match: how tests see what a request
 * costs Postgres, on the real database rather than a stand-in.
 */
export function countingPool(pool: Pool, match: (sql: string) => boolean = () => true): { pool: Pool; count: () => number } {
  let count = 0;
  const counted = new Proxy(pool, {
    get(target, prop, receiver) {
      if (prop !== 'query') return Reflect.get(target, prop, receiver) as unknown;
      return (...args: unknown[]) => {
        const text = typeof args[0] === 'string' ? args[0] : (args[0] as { text?: string }).text;
        if (text !== undefined && match(text)) count++;
        return (target.query as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
  return { pool: counted, count: () => count };
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Resolves once the app's in-memory key index holds `key`: a key created on Postgres reaches an
 * app by notification, milliseconds after its commit, and is refused (401) until then.
 */
export async function keyKnown(app: FastifyInstance, key: string, timeoutMs = 5_000): Promise<void> {
  const hash = hashApiKey(key);
  await eventually(async () => app.keyIndex.knows(hash), timeoutMs, 2);
}

/**
 * The same for an API in another process (`base` its URL): resolves once it accepts `key`. The
 * 401s on the way count against this address's failure budget, which a valid key never waits for.
 */
export async function keyAccepted(base: string, key: string, timeoutMs = 10_000): Promise<void> {
  await eventually(async () => (await fetch(`${base}/quotas`, { headers: { authorization: `Bearer ${key}` } })).status === 200, timeoutMs, 10);
}

/** Polls `fn` until it returns a truthy value or `timeoutMs` passes. */
export async function eventually<T>(fn: () => Promise<T | undefined | null | false>, timeoutMs = 15_000, everyMs = 100): Promise<T> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > until) throw new Error(`condition not met within ${timeoutMs} ms`);
    await sleep(everyMs);
  }
}

/** A message of the WebSocket live feed (`hello`, `event`, …). */
export interface FeedMessage {
  type: string;
  event?: string;
  job_id?: string;
  topic?: string;
  partition?: number;
  offset?: string;
  data?: Record<string, unknown>;
}

/**
 * Opens the live feed at `url` (`ws://…/events?…`) and collects what it sends; resolves after the
 * hello. An upgrade refused before it happens rejects with the HTTP status (`status`).
 */
export async function connectFeed(url: string, headers: Record<string, string>): Promise<{ ws: WebSocket; messages: FeedMessage[] }> {
  const ws = new WebSocket(url, { headers });
  const messages: FeedMessage[] = [];
  ws.on('message', (data) => messages.push(JSON.parse(String(data))));
  await new Promise<void>((resolve, reject) => {
    ws.once('open', () => resolve());
    ws.once('unexpected-response', (_req, res) => reject(Object.assign(new Error(`HTTP ${res.statusCode}`), { status: res.statusCode })));
    ws.once('error', reject);
  });
  await eventually(async () => messages.find((m) => m.type === 'hello'));
  return { ws, messages };
}

export interface Route {
  readonly method: string;
  readonly url: string;
}

/**
 * Every route the app serves (HEAD left out), read from Fastify's own route tree so that a new
 * route is walked by the access and fuzz tests without anyone listing it. `printRoutes` prints a
 * radix tree, one node a line, indented four characters a level; a node's path is its ancestors'
 * segments and its own, concatenated (`/` + `me` + `trics` + `/scrape` = `/metrics/scrape`).
 */
export function routeList(app: FastifyInstance): Route[] {
  const routes: Route[] = [];
  const segments: string[] = [];
  for (const line of app.printRoutes({ commonPrefix: false }).split('\n')) {
    const node = /^([│ ]*)[├└]── (.+?)(?: \(([A-Z, ]+)\))?$/.exec(line);
    if (!node) continue;
    const depth = node[1]!.length / 4;
    segments.length = depth;
    segments.push(node[2]!);
    for (const method of node[3]?.split(', ') ?? []) {
      if (method !== 'HEAD') routes.push({ method, url: segments.join('') });
    }
  }
  return routes;
}
