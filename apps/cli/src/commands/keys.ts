/**
 * `trawl keys create <user> [--label text]`: a new API key for `user`, printed alone on stdout
 * (so `npx trawl keys create alice > .trawl/api-key` works). Talks to Postgres directly: keys
 * must be mintable before, and without, a running API.
 */
import { API_MIGRATION_OWNER, API_MIGRATIONS, createApiKey, InvalidUserIdError } from '@trawl/api/keys';
import { createPool, migrate } from '@trawl/store';
import { CliError } from '../lib/cli-error.ts';

export async function createKey(user: string, label: string | null = null): Promise<string> {
  const pool = createPool({ applicationName: 'trawl-cli', max: 1 });
  try {
    await migrate(pool, API_MIGRATION_OWNER, API_MIGRATIONS);
    return (await createApiKey(pool, user, label)).key;
  } catch (err) {
    if (err instanceof InvalidUserIdError) throw new CliError(err.message, 2);
    if ((err as { code?: string }).code === 'ECONNREFUSED') throw new CliError('cannot reach Postgres; is the stack up? try `npx trawl up`');
    throw err;
  } finally {
    await pool.end();
  }
}
