/**
 * The in-memory API key index with many keys (`npm run bench:key-index -w @trawl/api [-- --keys
 * 100000 --requests 2000]`), on a throw-away database of the local Postgres:
 *
 * 1. `--keys` keys of 1,000 users are inserted (their notifications go to no one yet).
 * 2. The index alone: its first load (time) and its heap (garbage collected before and after).
 * 3. The real API (buildApp with the console mounted, as main.ts does): its start with the keys
 *    loaded; an authentication's cost in the process (hash + lookup, ns); requests through
 *    Fastify (`inject`, p50/p99) with made-up keys (401, no query) and valid ones on `/quotas`
 *    (one query of its own); a periodic resync's time; how long a key created, then revoked, takes
 *    to be accepted, then refused.
 *
 * Figures on stderr, JSON to stdout and bench-results/key-index.json. Run with `--expose-gc`
 * (the npm script does) for the heap figures.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import trawlConsole from '@trawl/console';
import { repoRoot } from '@trawl/streams';
import { CONFIG_MIGRATIONS, migrate, WEBHOOK_MIGRATION_OWNER, WEBHOOK_MIGRATIONS } from '@trawl/store';
import { createTestDatabase } from '@trawl/store/testing';
import { buildApp } from '../src/app.ts';
import { KeyIndex } from '../src/auth/key-index.ts';
import { activeKeysPage, API_KEY_PREFIX, createApiKey, hashApiKey, newKeyId, revokeApiKey } from '../src/data/api-keys.ts';
import { API_MIGRATION_OWNER, API_MIGRATIONS } from '../src/data/migrations.ts';

const { values: args } = parseArgs({
  options: {
    keys: { type: 'string', default: '100000' },
    requests: { type: 'string', default: '2000' },
  },
});
const KEYS = Number(args.keys);
const REQUESTS = Number(args.requests);
const say = (line: string) => process.stderr.write(`${line}\n`);
const gc = (globalThis as { gc?: () => void }).gc;

function heapMb(): number {
  gc?.();
  return process.memoryUsage().heapUsed / 1e6;
}

function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))]!;
}

async function timed(n: number, run: (i: number) => Promise<unknown>): Promise<{ p50_ms: number; p99_ms: number }> {
  const ms: number[] = [];
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await run(i);
    ms.push(performance.now() - t);
  }
  ms.sort((a, b) => a - b);
  return { p50_ms: +percentile(ms, 0.5).toFixed(3), p99_ms: +percentile(ms, 0.99).toFixed(3) };
}

async function until(test: () => boolean, what: string): Promise<number> {
  const t = performance.now();
  while (!test()) {
    if (performance.now() - t > 10_000) throw new Error(`${what}: not within 10 s`);
    await new Promise((r) => setImmediate(r));
  }
  return +(performance.now() - t).toFixed(2);
}

const db = await createTestDatabase('trawl_api_bench_keys');
try {
  await migrate(db.pool, 'config', CONFIG_MIGRATIONS);
  await migrate(db.pool, API_MIGRATION_OWNER, API_MIGRATIONS);
  await migrate(db.pool, WEBHOOK_MIGRATION_OWNER, WEBHOOK_MIGRATIONS);

  const keys: string[] = [];
  let t = performance.now();
  for (let done = 0; done < KEYS; ) {
    const batch = Math.min(10_000, KEYS - done);
    const ids: string[] = [];
    const users: string[] = [];
    const hashes: string[] = [];
    for (let i = 0; i < batch; i++) {
      const key = API_KEY_PREFIX + randomBytes(32).toString('base64url');
      keys.push(key);
      ids.push(newKeyId());
      users.push(`bench-user-${(done + i) % 1_000}`);
      hashes.push(hashApiKey(key));
    }
    await db.pool.query('INSERT INTO api_keys (id, user_id, key_hash) SELECT * FROM unnest($1::text[], $2::text[], $3::text[])', [ids, users, hashes]);
    done += batch;
  }
  say(`${KEYS} keys inserted in ${((performance.now() - t) / 1000).toFixed(1)} s`);

  // The index alone: what it holds, without the app around it.
  const before = heapMb();
  const alone = new KeyIndex({ loadPage: (prefix, after, limit) => activeKeysPage(db.pool, prefix, after, limit) });
  t = performance.now();
  await alone.resync();
  const firstLoadMs = performance.now() - t;
  const indexMb = heapMb() - before;
  if (alone.size !== KEYS) throw new Error(`the index holds ${alone.size} keys, not ${KEYS}`);
  say(`index alone: first load ${firstLoadMs.toFixed(0)} ms, heap ${indexMb.toFixed(1)} MB (${((indexMb * 1e6) / KEYS).toFixed(0)} B a key)`);

  // In-process cost of one authentication: the hash and the lookup.
  const lookups = 200_000;
  t = performance.now();
  let found = 0;
  for (let i = 0; i < lookups; i++) if (alone.userOf(hashApiKey(keys[(i * 7919) % KEYS]!))) found++;
  const authNs = ((performance.now() - t) * 1e6) / lookups;
  if (found !== lookups) throw new Error('a key was not found');
  say(`hash + lookup: ${authNs.toFixed(0)} ns an authentication`);

  // The app as main.ts builds it.
  const producer = { emit: () => Promise.reject(new Error('the bench sends nothing')) };
  t = performance.now();
  const app = await buildApp({ pool: db.pool, producer, config: { rateLimitMax: 10_000_000, authFailureLimit: 10_000_000 }, mount: (a) => a.register(trawlConsole) });
  await app.ready();
  const startMs = performance.now() - t;
  say(`app ready with ${app.keyIndex.size} keys indexed in ${startMs.toFixed(0)} ms`);

  const madeUp = await timed(REQUESTS, () =>
    app.inject({ method: 'GET', url: '/quotas', headers: { authorization: `Bearer ${API_KEY_PREFIX}${randomBytes(32).toString('base64url')}` } }),
  );
  const valid = await timed(REQUESTS, (i) => app.inject({ method: 'GET', url: '/quotas', headers: { authorization: `Bearer ${keys[(i * 7919) % KEYS]}` } }));
  say(`GET /quotas through Fastify: made-up key (401) p50 ${madeUp.p50_ms} ms p99 ${madeUp.p99_ms} ms; valid key (200, one query of the route's) p50 ${valid.p50_ms} ms p99 ${valid.p99_ms} ms`);

  t = performance.now();
  await alone.resync();
  const resyncMs = performance.now() - t;
  say(`a full resync: ${resyncMs.toFixed(0)} ms`);

  const created = await createApiKey(db.pool, 'bench-late');
  const acceptedAfterMs = await until(() => app.keyIndex.knows(hashApiKey(created.key)), 'a new key indexed');
  await revokeApiKey(db.pool, created.id);
  const refusedAfterMs = await until(() => !app.keyIndex.knows(hashApiKey(created.key)), 'a revoked key dropped');
  say(`a key created is indexed ${acceptedAfterMs} ms after its commit, a key revoked dropped ${refusedAfterMs} ms after`);
  await app.close();

  const result = {
    keys: KEYS,
    index_first_load_ms: Math.round(firstLoadMs),
    index_heap_mb: +indexMb.toFixed(1),
    index_bytes_per_key: Math.round((indexMb * 1e6) / KEYS),
    resync_ms: Math.round(resyncMs),
    app_ready_ms: Math.round(startMs),
    auth_hash_and_lookup_ns: Math.round(authNs),
    inject_made_up_key: madeUp,
    inject_valid_key_quotas: valid,
    created_to_indexed_ms: acceptedAfterMs,
    revoked_to_dropped_ms: refusedAfterMs,
    node: process.version,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
  const dir = join(repoRoot, 'bench-results');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'key-index.json'), `${JSON.stringify(result, null, 2)}\n`);
} finally {
  await db.drop();
}
