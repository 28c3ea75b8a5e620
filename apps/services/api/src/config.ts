/**
 * The API's settings, from the environment. Tests pass overrides to `buildApp` instead of touching
 * `process.env`, so several apps with different limits can live in one test process.
 */
import { DEFAULT_QUOTAS, quotasFromEnv, type QuotaLimits } from '@trawl/store';
import { DEFAULT_WEBHOOK_QUOTAS, webhookQuotasFromEnv, type WebhookQuotaLimits } from '@trawl/store';
import { DEFAULT_READY_CACHE_MS, readyCacheMsFromEnv } from '@trawl/streams';
import type { ContentRetentionConfig } from './content/retention.ts';
import { DEFAULT_SCRAPE_CONFIG, type ScrapeConfig } from './scrape/scrape-service.ts';
import { DEFAULT_USER_SECRET_LIMITS, userSecretLimitsFromEnv, type UserSecretLimits } from '@trawl/store/secrets';

export interface ApiConfig {
  readonly port: number;
  readonly host: string;
  /** How long an identical crawl request returns the existing job (`TRAWL_DEDUPE_TTL`, seconds). */
  readonly dedupeTtlSeconds: number;
  /** Largest accepted body in bytes; crawl requests are small, so the default is tight. */
  readonly bodyLimit: number;
  /** Requests per key per window, all routes together. */
  readonly rateLimitMax: number;
  /** `POST /crawl` per key per window: each one may start a crawl, so it has its own budget. */
  readonly crawlRateLimitMax: number;
  readonly rateLimitWindowMs: number;
  /**
   * `/healthz` and `/readyz` per client address per window. They need no key, so the per-key
   * budget does not hold them; probes come a few times a minute, a flood gets 429.
   */
  readonly healthRateLimitMax: number;
  /** How long a round of readiness checks answers `/readyz` (TRAWL_READY_CACHE_MS, shared with every operator port). */
  readonly readyCacheMs: number;
  /** How often a job's log is polled for its open SSE streams (one poller per job, shared by them). */
  readonly ssePollMs: number;
  /** SSE comment sent when nothing else was, so proxies keep the stream open. */
  readonly sseHeartbeatMs: number;
  /** A WebSocket client whose unsent data passes this is skipped (events dropped, see live-feed). */
  readonly feedHighWaterBytes: number;
  /** A client that stays over the high-water mark this long is disconnected (close code 1013). */
  readonly feedSlowCloseMs: number;
  /** SSE log streams and WebSocket feeds one user may hold open on one API instance. */
  readonly maxStreamsPerUser: number;
  /**
   * How often each instance reloads its in-memory index of API keys in full. Notifications keep
   * it current; this bounds how long a change whose notification was missed goes unseen.
   */
  readonly keyResyncMs: number;
  /**
   * Failed authentications per client address per window (a missing, malformed, unknown or
   * revoked key); past it the address gets 429. A valid key never counts and is never refused.
   */
  readonly authFailureLimit: number;
  /**
   * Fastify's `trustProxy`: whom to believe about the client's address (`X-Forwarded-For`), so that
   * per-address limits behind a load balancer apply to clients, not to the balancer. Off by default.
   */
  readonly trustProxy: boolean | number | string;
  /**
   * Where clients reach this API (`TRAWL_API_PUBLIC_URL`, a comma list for several): the `servers`
   * of the OpenAPI document. Empty: `http://<host>:<port>` of this instance (127.0.0.1 for a
   * wildcard host), where `npm start` serves it. Set it behind a load balancer or a TLS proxy.
   */
  readonly publicUrl: string;
  /** Every user's quotas unless `user_quotas` says otherwise (`TRAWL_QUOTA_*`). */
  readonly quotas: QuotaLimits;
  /** How long a job's stored content is kept after the job ends, and how the sweep that enforces it runs. */
  readonly contentRetention: ContentRetentionConfig;
  /** Every user's webhook limits unless `user_quotas` says otherwise (`TRAWL_QUOTA_WEBHOOK*`). */
  readonly webhookQuotas: WebhookQuotaLimits;
  /** Secrets per user and bytes per value (`TRAWL_SECRETS_MAX_PER_USER`, `TRAWL_SECRETS_MAX_VALUE_BYTES`). */
  readonly secretLimits: UserSecretLimits;
  /** `POST /scrape` and `POST /map` timeouts (`TRAWL_SCRAPE_TIMEOUT_MS`, `TRAWL_SCRAPE_MAX_TIMEOUT_MS`, `TRAWL_MAP_TIMEOUT_MS`). */
  readonly scrape: ScrapeConfig;
}

export const DEFAULT_CONFIG: ApiConfig = {
  port: 3000,
  host: '127.0.0.1',
  dedupeTtlSeconds: 3600,
  bodyLimit: 64 * 1024,
  rateLimitMax: 1200,
  crawlRateLimitMax: 300,
  rateLimitWindowMs: 60_000,
  healthRateLimitMax: 300,
  readyCacheMs: DEFAULT_READY_CACHE_MS,
  ssePollMs: 250,
  sseHeartbeatMs: 15_000,
  feedHighWaterBytes: 1024 * 1024,
  feedSlowCloseMs: 30_000,
  maxStreamsPerUser: 20,
  keyResyncMs: 300_000,
  authFailureLimit: 60,
  trustProxy: false,
  publicUrl: '',
  quotas: DEFAULT_QUOTAS,
  contentRetention: { defaultSeconds: 30 * 86_400, maxSeconds: 90 * 86_400, sweepMs: 600_000 },
  webhookQuotas: DEFAULT_WEBHOOK_QUOTAS,
  secretLimits: DEFAULT_USER_SECRET_LIMITS,
  scrape: DEFAULT_SCRAPE_CONFIG,
};

function int(env: NodeJS.ProcessEnv, name: string, dflt: number, min = 0): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return dflt;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min) throw new Error(`${name} must be an integer ≥ ${min}, got "${raw}"`);
  return n;
}

/** `TRAWL_API_TRUST_PROXY`: `true`, a hop count, or a comma list of addresses/CIDRs (Fastify's forms). */
function trustProxy(raw: string | undefined): boolean | number | string {
  if (raw === undefined || raw === '' || raw === 'false') return false;
  if (raw === 'true') return true;
  if (/^\d+$/.test(raw)) return Number(raw);
  return raw;
}

export function configFromEnv(env: NodeJS.ProcessEnv = process.env): ApiConfig {
  const d = DEFAULT_CONFIG;
  return {
    port: int(env, 'TRAWL_API_PORT', d.port, 0),
    host: env.TRAWL_API_HOST || d.host,
    dedupeTtlSeconds: int(env, 'TRAWL_DEDUPE_TTL', d.dedupeTtlSeconds, 0),
    bodyLimit: int(env, 'TRAWL_API_BODY_LIMIT', d.bodyLimit, 1024),
    rateLimitMax: int(env, 'TRAWL_API_RATE_LIMIT', d.rateLimitMax, 1),
    crawlRateLimitMax: int(env, 'TRAWL_API_CRAWL_RATE_LIMIT', d.crawlRateLimitMax, 1),
    rateLimitWindowMs: int(env, 'TRAWL_API_RATE_WINDOW_MS', d.rateLimitWindowMs, 1000),
    healthRateLimitMax: int(env, 'TRAWL_API_HEALTH_RATE_LIMIT', d.healthRateLimitMax, 1),
    readyCacheMs: readyCacheMsFromEnv(env),
    ssePollMs: int(env, 'TRAWL_SSE_POLL_MS', d.ssePollMs, 10),
    sseHeartbeatMs: int(env, 'TRAWL_SSE_HEARTBEAT_MS', d.sseHeartbeatMs, 100),
    feedHighWaterBytes: int(env, 'TRAWL_FEED_HIGH_WATER_BYTES', d.feedHighWaterBytes, 1024),
    feedSlowCloseMs: int(env, 'TRAWL_FEED_SLOW_CLOSE_MS', d.feedSlowCloseMs, 100),
    maxStreamsPerUser: int(env, 'TRAWL_API_MAX_STREAMS_PER_USER', d.maxStreamsPerUser, 1),
    keyResyncMs: int(env, 'TRAWL_API_KEY_RESYNC_MS', d.keyResyncMs, 1000),
    authFailureLimit: int(env, 'TRAWL_API_AUTH_FAILURE_LIMIT', d.authFailureLimit, 1),
    trustProxy: trustProxy(env.TRAWL_API_TRUST_PROXY),
    publicUrl: env.TRAWL_API_PUBLIC_URL?.trim() ?? d.publicUrl,
    scrape: {
      ...d.scrape,
      defaultTimeoutMs: int(env, 'TRAWL_SCRAPE_TIMEOUT_MS', d.scrape.defaultTimeoutMs, 1),
      maxTimeoutMs: int(env, 'TRAWL_SCRAPE_MAX_TIMEOUT_MS', d.scrape.maxTimeoutMs, 1),
      mapTimeoutMs: int(env, 'TRAWL_MAP_TIMEOUT_MS', d.scrape.mapTimeoutMs, 1),
    },
    quotas: quotasFromEnv(env),
    contentRetention: contentRetentionFromEnv(env),
    webhookQuotas: webhookQuotasFromEnv(env),
    secretLimits: userSecretLimitsFromEnv(env),
  };
}

function contentRetentionFromEnv(env: NodeJS.ProcessEnv): ContentRetentionConfig {
  const d = DEFAULT_CONFIG.contentRetention;
  const config = {
    defaultSeconds: int(env, 'TRAWL_CONTENT_RETENTION_SECONDS', d.defaultSeconds, 1),
    maxSeconds: int(env, 'TRAWL_CONTENT_RETENTION_MAX_SECONDS', d.maxSeconds, 1),
    sweepMs: int(env, 'TRAWL_CONTENT_SWEEP_MS', d.sweepMs, 0),
  };
  if (config.defaultSeconds > config.maxSeconds) {
    throw new Error(`TRAWL_CONTENT_RETENTION_SECONDS (${config.defaultSeconds}) must not exceed TRAWL_CONTENT_RETENTION_MAX_SECONDS (${config.maxSeconds})`);
  }
  return config;
}
