/**
 * Bearer API keys. `fastify.authenticate` is an onRequest hook for the routes that need a user;
 * it sets `request.userId`, the only identity every query is scoped by.
 *
 * Browsers cannot set headers on a WebSocket or an EventSource, so the routes that serve those
 * (`config.allowQueryToken`) also take `?access_token=`; the request serializer in app.ts keeps it
 * out of the logs.
 *
 * Who a key is, without asking Postgres: every instance holds the active keys' hashes and owners
 * in memory (auth/key-index.ts) and looks a presented key's SHA-256 up there.
 * - A known key is its owner, whatever its address did: no budget is consulted, so a valid key
 *   is never refused because others behind the same address (a NAT, a proxy) sent made-up ones.
 * - A missing, malformed, unknown or revoked key is 401 without any query, and counts against the
 *   client address's `authFailureLimit` (429 past it). That budget no longer protects Postgres,
 *   which a bad key never reaches; it slows a brute force down.
 * - The index is loaded before the app is ready, kept current by the notifications that
 *   `api_keys`' triggers send on every change (migration 4: a key created or revoked reaches every
 *   instance milliseconds after the commit, and is usable or refused from then), and reloaded in
 *   full on every reconnect of the listening connection and every `keyResyncMs`, in case a
 *   notification was missed (data/notification-listener.ts).
 * - Open streams (SSE logs, WebSocket feeds) outlive their request: `fastify.watchKey` ends them
 *   when their key is revoked (auth/key-watch.ts) — at once on its notification, at the end of
 *   the resync that drops it otherwise, and within a round (`WATCH_ROUND_MS`, in memory) for a
 *   key revoked between a stream's authentication and its watch.
 */
import fp from 'fastify-plugin';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { Counter, Gauge } from 'prom-client';
import { KeyIndex } from '../auth/key-index.ts';
import { KeyWatch } from '../auth/key-watch.ts';
import { activeKeysPage, API_KEY_CHANNEL, API_KEY_PATTERN, hashApiKey, parseApiKeyChange } from '../data/api-keys.ts';
import { NotificationListener } from '../data/notification-listener.ts';
import { ApiError } from '../errors.ts';
import { clientAddressKey } from '../limits/client-address.ts';

/** What an operator or a test may see of the key index: counts and states, never a key. */
export interface KeyIndexView {
  /** Active keys indexed on this instance. */
  readonly size: number;
  /** Whether the key with this SHA-256 (hex) is active, as this instance knows it. */
  knows(hash: string): boolean;
  /** Whether this instance hears key changes right now (its listening connection is up). */
  readonly listening: boolean;
  /** Full reloads completed, the first one included. */
  readonly resyncs: number;
}

declare module 'fastify' {
  interface FastifyInstance {
    authenticate: (request: FastifyRequest, reply: FastifyReply) => Promise<void>;
    /** The key's user when the request carries a good key, else undefined; never throws for a bad key. */
    identify: (request: FastifyRequest, reply: FastifyReply) => Promise<string | undefined>;
    /**
     * For a stream opened by an authenticated request: calls `onRevoked` once its key is revoked
     * (see the header). Returns the function that stops watching: call it when the stream ends.
     */
    watchKey: (request: FastifyRequest, onRevoked: () => void) => () => void;
    keyIndex: KeyIndexView;
  }
  interface FastifyRequest {
    /** The API key's owner; set by `authenticate`. */
    userId: string;
  }
  interface FastifyContextConfig {
    /** Accept the key as `?access_token=` too (WebSocket, EventSource). */
    allowQueryToken?: boolean;
  }
}

export interface AuthOptions {
  /**
   * Where keys come from: `postgres` (the pool's `api_keys`, indexed and listened to), or `none`:
   * no key is valid and nothing connects (the offline OpenAPI build).
   */
  readonly keys?: 'postgres' | 'none';
}

/**
 * How often the keys of open streams are checked against the index. In memory, so cheap; it only
 * catches a key revoked after its stream authenticated and before the stream began watching it.
 */
const WATCH_ROUND_MS = 1_000;
/** How the listening connection shows in `pg_stat_activity`. */
export const KEY_LISTENER_NAME = 'trawl-api-key-listener';

/** The key a request presents, or undefined. Exported for the rate limiter's key generator. */
export function presentedKey(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (header) {
    const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
    return match?.[1];
  }
  if (request.routeOptions.config?.allowQueryToken) {
    const token = (request.query as { access_token?: unknown } | undefined)?.access_token;
    if (typeof token === 'string') return token;
  }
  return undefined;
}

export default fp<AuthOptions>(
  async (fastify, { keys = 'postgres' }) => {
    const { keyResyncMs } = fastify.config;
    const keyWatch = new KeyWatch({
      everyMs: WATCH_ROUND_MS,
      stillGood: async (hashes) => new Set(hashes.filter((hash) => index.knows(hash))),
      onError: (err) => fastify.log.warn({ err }, 'could not end a revoked key\'s stream'),
    });
    const index = new KeyIndex({
      loadPage: (prefix, after, limit) => activeKeysPage(fastify.db, prefix, after, limit),
      // Revoked (or deleted, or given to another user): what it has open ends now.
      onRemoved: (hash) => keyWatch.revoked(hash),
      onResynced: () => void keyWatch.check(),
    });
    const resyncs = new Counter({
      name: 'trawl_api_key_index_resyncs_total',
      help: 'Full reloads of the in-memory API key index, by outcome (ok, failed)',
      labelNames: ['outcome'],
      registers: [fastify.metrics.registry],
    });
    let started = false;
    function resync(why: string): void {
      index.resync().then(
        () => resyncs.inc({ outcome: 'ok' }),
        (err: unknown) => {
          resyncs.inc({ outcome: 'failed' });
          fastify.log.warn({ err, why }, 'could not reload the API keys; the index keeps what it knew until the next reload');
        },
      );
    }
    const listener = new NotificationListener({
      pool: fastify.db,
      channel: API_KEY_CHANNEL,
      applicationName: KEY_LISTENER_NAME,
      onNotification: (payload) => {
        const change = parseApiKeyChange(payload);
        if (change.kind === 'key') index.apply(change);
        else resync('api_keys was emptied, or a notification was not understood');
      },
      // What was announced while it was down is lost: reload (the first time, onReady does).
      onListening: () => {
        if (started) resync('listening again');
      },
      onDown: (err) => fastify.log.warn({ err }, 'the API keys\' listening connection is down; reconnecting (keys created or revoked meanwhile are seen once it is back)'),
    });
    new Gauge({
      name: 'trawl_api_key_index_keys',
      help: 'Active API keys in this instance\'s in-memory index',
      registers: [fastify.metrics.registry],
      collect() {
        this.set(index.size);
      },
    });
    new Gauge({
      name: 'trawl_api_key_index_listening',
      help: '1 while this instance hears API key changes (its listening connection is up)',
      registers: [fastify.metrics.registry],
      collect() {
        this.set(listener.listening ? 1 : 0);
      },
    });

    let periodic: NodeJS.Timeout | undefined;
    fastify.addHook('onReady', async () => {
      if (keys === 'none') return;
      // LISTEN first: whatever commits during the first load is heard.
      await listener.start();
      // From here a reconnect reloads too, after this load if it comes during it.
      started = true;
      await index.resync();
      resyncs.inc({ outcome: 'ok' });
      periodic = setInterval(() => resync('periodic'), keyResyncMs);
      periodic.unref();
    });
    fastify.addHook('onClose', async () => {
      clearInterval(periodic);
      keyWatch.close();
      await listener.close();
    });

    /** Counts a failed authentication against the address: 401, or 429 once its budget is spent. */
    function failed(reply: FastifyReply, request: FastifyRequest, message: string): never {
      const limit = fastify.limits.authFailures;
      const take = limit.take(clientAddressKey(request.ip));
      if (!take.allowed) fastify.limits.refuse(reply, take, `limit of ${limit.max} failed authentications from one address`);
      throw new ApiError('UNAUTHENTICATED', message);
    }

    function userOf(request: FastifyRequest, reply: FastifyReply): string {
      const key = presentedKey(request);
      if (!key) failed(reply, request, 'missing API key: send "Authorization: Bearer <key>"');
      const userId = API_KEY_PATTERN.test(key) ? index.userOf(hashApiKey(key)) : undefined;
      if (userId === undefined) failed(reply, request, 'unknown or revoked API key');
      return userId;
    }

    fastify.decorateRequest('userId', '');
    fastify.decorate('keyIndex', {
      get size() {
        return index.size;
      },
      knows: (hash: string) => index.knows(hash),
      get listening() {
        return listener.listening;
      },
      get resyncs() {
        return index.resyncs;
      },
    } satisfies KeyIndexView);
    fastify.decorate('authenticate', async (request: FastifyRequest, reply: FastifyReply) => {
      request.userId = userOf(request, reply);
    });
    fastify.decorate('watchKey', (request: FastifyRequest, onRevoked: () => void) => {
      const key = presentedKey(request);
      // Only authenticated requests open streams, so there is a key; without one there is nothing to revoke.
      if (!key) return () => undefined;
      return keyWatch.watch(hashApiKey(key), onRevoked);
    });
    fastify.decorate('identify', async (request: FastifyRequest, reply: FastifyReply) => {
      if (!presentedKey(request)) return undefined;
      try {
        return userOf(request, reply);
      } catch (err) {
        if (err instanceof ApiError && err.code === 'UNAUTHENTICATED') return undefined;
        throw err;
      }
    });
  },
  { name: 'auth', dependencies: ['dependencies', 'rate-limit', 'metrics'], fastify: '5.x' },
);
