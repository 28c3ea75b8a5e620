/**
 * The local stack's generated passwords, in TRAWL_HOME/credentials.env (mode 0600). Made once, on
 * the first `up` that needs them, and kept: a password that changed under a running service would
 * lock it out. Services never read this file; they get endpoint URLs with the credentials they need
 * in them (TRAWL_HOME/stack.env, also 0600). What is here and nowhere else is what only the stack
 * and an operator use: the Postgres superuser's password and ClickHouse's `default` (admin) user.
 *
 * The key of secrets at rest (`TRAWL_SECRETS_KEY`, 32 random bytes in base64: the API seals webhook
 * secrets with it, the webhooks service opens them) is generated and kept the same way, and handed
 * to services through stack.env with `TRAWL_SECRETS_OLD_KEYS` when an operator rotates it.
 */
import { randomBytes } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { parseEnvFile } from '@trawl/streams';

/** Account names; the passwords are generated. */
export const ACCOUNTS = {
  /** Postgres: the project's role, owner of its databases (not a superuser). */
  postgresRole: 'trawl',
  /** Postgres: the superuser of a private cluster. */
  postgresAdmin: 'postgres',
  /** ClickHouse: projector-ch, replays, tests. */
  clickhouseWriter: 'trawl',
  /** ClickHouse: the console's queries (readonly=2: reads, and settings for a query). */
  clickhouseReader: 'trawl_reader',
  /** The registry's one user (Quarkus embedded realm). */
  registry: 'trawl',
  /** S3Proxy: the access key of the content store. */
  s3: 'trawl',
} as const;

export const CREDENTIAL_KEYS = [
  'TRAWL_POSTGRES_PASSWORD',
  'TRAWL_POSTGRES_ADMIN_PASSWORD',
  'TRAWL_CLICKHOUSE_PASSWORD',
  'TRAWL_CLICKHOUSE_READER_PASSWORD',
  'TRAWL_CLICKHOUSE_ADMIN_PASSWORD',
  'TRAWL_REGISTRY_PASSWORD',
  'TRAWL_S3_SECRET',
  'TRAWL_SECRETS_KEY',
] as const;

/** The key of secrets at rest: not a password (base64, 32 bytes); see secretsEnv. */
export const SECRETS_KEY = 'TRAWL_SECRETS_KEY';
export const SECRETS_OLD_KEYS = 'TRAWL_SECRETS_OLD_KEYS';

export type CredentialKey = (typeof CREDENTIAL_KEYS)[number];
export type StackCredentials = Readonly<Record<CredentialKey, string>>;

const HEADER = [
  '# Written by `npm run stack -- up`: passwords of the local stack and the key of secrets at rest, generated once. Keep it private (mode 0600).',
  '# Services do not read this file: stack.env hands them endpoint URLs with the credentials they need.',
];

export function credentialsFile(home: string): string {
  return join(home, 'credentials.env');
}

/** 24 random bytes, URL-safe: no character needs escaping in a URL, an XML file or a SQL literal. */
export function generatePassword(): string {
  return randomBytes(24).toString('base64url');
}

/** 32 random bytes in base64: an AES-256 key, as `TRAWL_SECRETS_KEY` takes it. */
export function generateSecretsKey(): string {
  return randomBytes(32).toString('base64');
}

/** What a value of `key` set in the environment must look like; the message when it does not. */
function invalidFromEnv(key: CredentialKey, value: string): string | undefined {
  if (key === SECRETS_KEY) {
    const ok = /^[A-Za-z0-9+/_-]+={0,2}$/.test(value) && Buffer.from(value, /[-_]/.test(value) ? 'base64url' : 'base64').length === 32;
    return ok ? undefined : `${key} must be 32 random bytes in base64 (\`openssl rand -base64 32\`)`;
  }
  return /^[A-Za-z0-9._~-]{8,}$/.test(value) ? undefined : `${key} must be at least 8 characters of A-Z a-z 0-9 . _ ~ - (it goes into URLs and config files unescaped)`;
}

/**
 * The stack's passwords: read from the file, any missing one generated and the file rewritten
 * (atomically, 0600). A value set in the environment under the same name wins and is not stored,
 * so CI can choose its own.
 */
export function loadCredentials(home: string, env: NodeJS.ProcessEnv = process.env): StackCredentials {
  const file = credentialsFile(home);
  const stored = existsSync(file) ? parseEnvFile(readFileSync(file, 'utf8')) : {};
  const out: Record<string, string> = {};
  let changed = false;
  for (const key of CREDENTIAL_KEYS) {
    const fromEnv = env[key];
    if (fromEnv) {
      const invalid = invalidFromEnv(key, fromEnv);
      if (invalid) throw new Error(invalid);
      out[key] = fromEnv;
      continue;
    }
    const value = stored[key] || (key === SECRETS_KEY ? generateSecretsKey() : generatePassword());
    if (value !== stored[key]) changed = true;
    out[key] = value;
  }
  if (changed) {
    const keep = Object.fromEntries(Object.entries(out).filter(([k]) => !env[k]));
    writeSecretFile(file, [...HEADER, ...Object.entries({ ...stored, ...keep }).map(([k, v]) => `${k}=${v}`)].join('\n') + '\n');
  } else {
    keepPrivate(file);
  }
  return out as StackCredentials;
}

/**
 * The secrets' keys for stack.env, where services read them: the current key (generated, or the
 * environment's) and the old keys still accepted for opening, from the same place as the current
 * one — TRAWL_SECRETS_OLD_KEYS in the environment when the key comes from there, else the line an
 * operator rotating the stack's key adds to credentials.env (README: Secrets at rest).
 */
export function secretsEnv(home: string, creds: StackCredentials, env: NodeJS.ProcessEnv = process.env): Record<string, string | undefined> {
  const file = credentialsFile(home);
  const stored = existsSync(file) ? parseEnvFile(readFileSync(file, 'utf8')) : {};
  const old = env[SECRETS_KEY] ? env[SECRETS_OLD_KEYS] : stored[SECRETS_OLD_KEYS];
  return { [SECRETS_KEY]: creds.TRAWL_SECRETS_KEY, [SECRETS_OLD_KEYS]: old || undefined };
}

/** Writes `text` to `file` readable by its owner only, atomically (a reader sees the old or the new file). */
export function writeSecretFile(file: string, text: string): void {
  mkdirSync(dirname(file), { recursive: true });
  const tmp = `${file}.${process.pid}.tmp`;
  writeFileSync(tmp, text, { mode: 0o600 });
  chmodSync(tmp, 0o600); // the mode of writeFileSync is filtered by the umask
  renameSync(tmp, file);
}

/** Brings an existing file to 0600 (one written before the stack kept secrets in it). */
export function keepPrivate(file: string): void {
  if (existsSync(file) && (statSync(file).mode & 0o077) !== 0) chmodSync(file, 0o600);
}
