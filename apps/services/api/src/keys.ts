/**
 * What tools need to manage API keys without loading the web server (`@trawl/api/keys`): the
 * `trawl keys create` command talks to Postgres directly.
 */
export { createApiKey, listApiKeys, revokeApiKey, hashApiKey, userForApiKey, API_KEY_PREFIX, InvalidUserIdError, type ApiKeyListing, type CreatedApiKey } from './data/api-keys.ts';
export { API_MIGRATIONS, API_MIGRATION_OWNER } from './data/migrations.ts';
export { API_KEY_ID_PATTERN } from './data/api-keys.ts';
