/**
 * `trawl keys create <user> [--label text]`: a new API key for `user`, printed alone on stdout
 * (so `npx trawl keys create alice > .trawl/api-key` works), its id on stderr.
 * `trawl keys revoke <key id>`: the key is refused from then on (every API instance hears of a
 * new or revoked key by notification, milliseconds after the commit). `trawl keys list [<user>]`:
 * ids, owners, labels and states, never a key. All talk to Postgres directly, as an operator:
 * keys must be manageable before, and without, a running API.
 */
import { API_KEY_ID_PATTERN, API_MIGRATION_OWNER, API_MIGRATIONS, createApiKey, InvalidUserIdError, listApiKeys, revokeApiKey, type ApiKeyListing, type CreatedApiKey } from '@trawl/api/keys';
import { createPool, migrate, type Pool } from '@trawl/store';
import { CliError } from '../lib/cli-error.ts';
import { printable, table } from '../lib/format.ts';

async function withKeys<T>(work: (pool: Pool) => Promise<T>): Promise<T> {
  const pool = createPool({ applicationName: 'trawl-cli', max: 1 });
  try {
    await migrate(pool, API_MIGRATION_OWNER, API_MIGRATIONS);
    return await work(pool);
  } catch (err) {
    if (err instanceof InvalidUserIdError) throw new CliError(err.message, 2);
    if ((err as { code?: string }).code === 'ECONNREFUSED') throw new CliError('cannot reach Postgres; is the stack up? try `npx trawl up`');
    throw err;
  } finally {
    await pool.end();
  }
}

export function createKey(user: string, label: string | null = null): Promise<CreatedApiKey> {
  return withKeys((pool) => createApiKey(pool, user, label));
}

/** Revokes the key with this id; a CliError when there is no such key or it is revoked already. */
export async function revokeKey(id: string): Promise<void> {
  if (!API_KEY_ID_PATTERN.test(id)) throw new CliError(`"${id}" is not a key id (key_ and 16 hex digits, as \`trawl keys create\` prints on stderr)`, 2);
  if (!(await withKeys((pool) => revokeApiKey(pool, id)))) throw new CliError(`no active key ${id}: unknown or revoked already`);
}

const when = (d: Date) => d.toISOString().replace('T', ' ').slice(0, 19);

/** Every key (or one user's), oldest first: id, user, state (`active`, or when it was revoked), created, label. */
export async function listKeys(user: string | undefined, options: { json: boolean }): Promise<void> {
  const keys: ApiKeyListing[] = await withKeys((pool) => listApiKeys(pool, user === undefined ? {} : { userId: user }));
  if (options.json) return void process.stdout.write(JSON.stringify(keys, null, 2) + '\n');
  if (keys.length === 0) return void process.stdout.write(`no keys${user === undefined ? '' : ` of ${printable(user)}`} — make one: npx trawl keys create <user>\n`);
  const rows = [['key', 'user', 'state', 'created', 'label']];
  for (const k of keys) rows.push([k.id, printable(k.user_id), k.revoked_at ? `revoked ${when(k.revoked_at)}` : 'active', when(k.created_at), printable(k.label ?? '')]);
  process.stdout.write(table(rows) + '\n');
}
