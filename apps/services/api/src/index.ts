export { buildApp, type AppDeps } from './app.ts';
export { configFromEnv, DEFAULT_CONFIG, type ApiConfig } from './config.ts';
export { ERRORS, ERROR_CODES, ApiError, type ErrorCode } from './errors.ts';
export { API_MIGRATIONS, API_MIGRATION_OWNER } from './data/migrations.ts';
export { createApiKey, revokeApiKey, hashApiKey, API_KEY_PREFIX, InvalidUserIdError } from './data/api-keys.ts';
export { dedupeKey } from '@trawl/store';
export { FEED_TOPICS, FEED_EVENT_NAMES, type FeedEvent, type LiveSubscribe } from './feed/feed-event.ts';
export { defaultReadinessChecks, type ReadinessChecks } from './health/readiness.ts';
