/**
 * PostgreSQL, in order of preference:
 * 1. DATABASE_URL from the environment: used as is (the database is created when missing);
 * 2. a private cluster under TRAWL_HOME/postgres (0700), from Debian's binaries, on the first free
 *    port from 5432, whose every connection needs a SCRAM password;
 * 3. only when asked (TRAWL_POSTGRES_ADOPT_TRUSTING=1): the server already answering on
 *    127.0.0.1:5432 as user `postgres` without a password (the Debian service these machines run),
 *    where the project's role and databases are made. Such a server lets any local user in as any
 *    role, superuser included — to mint API keys or read a tenant's data — so it is never adopted
 *    by default; `up` says when it passed one over, and why.
 *
 * In cases 2 and 3 services connect as the project's role `trawl` with a generated password
 * (postgres-access.ts), written into stack.env's DATABASE_URL; the databases `trawl` and
 * `trawl_registry` (the schema registry's storage) exist afterwards and belong to it. In case 1
 * the databases exist afterwards.
 *
 * A stack that used the server on 5432 and moves to its private cluster takes its data along
 * (copyFromAdopted): the registry's schema ids must stay those the Kafka log's messages carry, and
 * API keys, websites, schedules and webhooks live nowhere else. The old databases stay where they
 * were; the README says how to drop them.
 */
import { appendFileSync, chownSync, existsSync, lstatSync, readdirSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ENDPOINT_DEFAULTS, redactText, redactUrl } from '@trawl/streams';
import { userEndpoint, type StackContext } from './context.ts';
import { ACCOUNTS, type StackCredentials } from './credentials.ts';
import { isLoopback, parseDatabaseUrl, withDatabase } from './database-url.ts';
import { ExternalEndpointError, MissingDependencyError, PartStartError, PortBusyError } from './errors.ts';
import type { PartDown, PartStatus, PartUp } from './part.ts';
import { query, unreachable } from './pg-client.ts';
import { ensureOwnedDatabases, ensureRole, renderPgHba, serverAuthNote } from './postgres-access.ts';
import { privateDir } from './private-dirs.ts';
import { tcpOpen, waitFor } from './probe.ts';
import { isRoot, osUser, type OsUser } from './os-user.ts';
import { isAlive, listenerPid, logTail, ownedPid, removePid, run, stopProcess, treeMemoryMb, writePid } from './process.ts';

/** The schema registry's own database, on the same server as Trawl's. */
export const REGISTRY_DATABASE = 'trawl_registry';

const PART = 'postgres';
const DEFAULT_URL = ENDPOINT_DEFAULTS.DATABASE_URL;
/** The project's database, as the default DATABASE_URL names it. */
const PROJECT_DATABASE = parseDatabaseUrl(DEFAULT_URL).database;

interface ClusterPaths {
  readonly root: string;
  readonly data: string;
  readonly conf: string;
  /**
   * The server's log, in the cluster's own 0700 directory: as root the server runs as `postgres`,
   * which cannot pass through the 0700 logs/ of the invoking user. logs/postgres.log links to it.
   */
  readonly log: string;
  readonly logLink: string;
}

function clusterPaths(ctx: StackContext): ClusterPaths {
  const root = join(ctx.home, 'postgres');
  const data = join(root, 'data');
  return { root, data, conf: join(data, 'trawl.conf'), log: join(root, 'postgres.log'), logLink: join(ctx.logDir, 'postgres.log') };
}

/** logs/postgres.log → ../postgres/postgres.log; a log file of an older stack there is kept beside it. */
function linkLog(paths: ClusterPaths): void {
  let stat;
  try {
    stat = lstatSync(paths.logLink);
  } catch {
    stat = undefined;
  }
  if (stat?.isSymbolicLink()) return;
  if (stat) renameSync(paths.logLink, `${paths.logLink}.old`);
  symlinkSync(join('..', 'postgres', 'postgres.log'), paths.logLink);
}

/** Creates the URL's database and the registry's when missing. Returns the names created. */
export async function ensureDatabases(url: string): Promise<string[]> {
  const target = parseDatabaseUrl(url).database;
  const admin = withDatabase(url, 'postgres');
  const created: string[] = [];
  for (const name of [...new Set([target, REGISTRY_DATABASE])]) {
    const { rowCount } = await query(admin, 'SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (rowCount) continue;
    try {
      await query(admin, `CREATE DATABASE "${name.replace(/"/g, '""')}"`);
      created.push(name);
    } catch (err) {
      // Another `up` (or a colleague's test run) created it between our check and our create.
      const code = (err as { code?: string }).code;
      if (code !== '42P04' && code !== '23505') throw err;
    }
  }
  return created;
}

function createdNote(created: string[]): string | undefined {
  return created.length > 0 ? `created database ${created.join(', ')}` : undefined;
}

/** Debian's server binaries, newest version first; TRAWL_POSTGRES_BIN overrides. */
export function postgresBinDir(env: NodeJS.ProcessEnv): string {
  if (env.TRAWL_POSTGRES_BIN) return env.TRAWL_POSTGRES_BIN;
  const base = '/usr/lib/postgresql';
  const versions = existsSync(base)
    ? readdirSync(base)
        .filter((v) => /^\d+$/.test(v) && existsSync(join(base, v, 'bin', 'initdb')))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (!versions[0]) {
    throw new MissingDependencyError(
      PART,
      `no PostgreSQL server binaries under ${base}`,
      'run `npm run setup` (installs Debian\'s postgresql), set TRAWL_POSTGRES_BIN to a directory holding initdb and pg_ctl, or set DATABASE_URL to a server of yours',
    );
  }
  return join(base, versions[0], 'bin');
}

/** The settings the stack owns, in a file postgresql.conf includes, rewritten at every start. */
export function renderClusterConf(port: number): string {
  return [
    '# Written by the Trawl local stack at every start; edit scripts/stack/src/postgres.ts instead.',
    "listen_addresses = '127.0.0.1'",
    "password_encryption = 'scram-sha-256'",
    `port = ${port}`,
    // TCP only: a socket path under TRAWL_HOME could pass the 107-byte limit of Unix socket names.
    "unix_socket_directories = ''",
    // Every app instance, the registry's pool and parallel tests each hold connections.
    'max_connections = 200',
    "timezone = 'UTC'",
    '',
  ].join('\n');
}

function recordedPort(conf: string): number | undefined {
  try {
    const m = /^port = (\d+)$/m.exec(readFileSync(conf, 'utf8'));
    return m?.[1] ? Number(m[1]) : undefined;
  } catch {
    return undefined;
  }
}

/** The forced port, else the port of the last start, else the first free one from 5432 (5433 where Debian's server runs). */
async function choosePort(ctx: StackContext, paths: ClusterPaths): Promise<number> {
  const forced = ctx.ports.postgres;
  if (forced !== undefined) {
    if (await tcpOpen('127.0.0.1', forced)) {
      throw new PortBusyError(PART, `port ${forced} (TRAWL_POSTGRES_PORT) is taken`, 'stop whatever listens there or choose another TRAWL_POSTGRES_PORT');
    }
    return forced;
  }
  const candidates = [...new Set([recordedPort(paths.conf), ...Array.from({ length: 10 }, (_, i) => 5432 + i)].filter((p): p is number => p !== undefined))];
  for (const p of candidates) if (!(await tcpOpen('127.0.0.1', p))) return p;
  throw new PortBusyError(PART, `ports ${candidates.join(', ')} are all taken`, 'set TRAWL_POSTGRES_PORT to a free port, or DATABASE_URL to a server you run');
}

function chownTo(path: string, user: OsUser | undefined): void {
  if (user) chownSync(path, user.uid, user.gid);
}

/** `postgres://<user>:<password>@127.0.0.1:<port>/<database>` */
function clusterUrl(port: number, user: string, password: string, database: string): string {
  return `postgres://${encodeURIComponent(user)}:${encodeURIComponent(password)}@127.0.0.1:${port}/${encodeURIComponent(database)}`;
}

/** The project's URL on a server: what services get in stack.env. */
function projectUrl(port: number, creds: StackCredentials): string {
  return clusterUrl(port, ACCOUNTS.postgresRole, creds.TRAWL_POSTGRES_PASSWORD, PROJECT_DATABASE);
}

/** Waits for the project's role to get in (a reloaded pg_hba.conf takes effect within moments). */
async function projectConnects(url: string): Promise<string | undefined> {
  const ok = await waitFor(async () => ((await unreachable(url)) === undefined ? true : undefined), { timeoutMs: 10_000, intervalMs: 200 });
  return ok.ok ? undefined : ((await unreachable(url)) ?? 'no answer');
}

/**
 * The private cluster's access, whatever state it was left in (a cluster made before the stack had
 * passwords trusts every connection): the superuser's and the project role's passwords, the
 * project's databases handed to the role, then pg_hba.conf asking everyone for a password.
 */
async function securePrivateCluster(paths: ClusterPaths, port: number, creds: StackCredentials, user: OsUser | undefined): Promise<string[]> {
  const admin = clusterUrl(port, ACCOUNTS.postgresAdmin, creds.TRAWL_POSTGRES_ADMIN_PASSWORD, 'postgres');
  await ensureRole(admin, ACCOUNTS.postgresAdmin, creds.TRAWL_POSTGRES_ADMIN_PASSWORD, 'LOGIN SUPERUSER');
  await ensureRole(admin, ACCOUNTS.postgresRole, creds.TRAWL_POSTGRES_PASSWORD, 'LOGIN CREATEDB NOSUPERUSER');
  const created = await ensureOwnedDatabases(admin, ACCOUNTS.postgresRole, [PROJECT_DATABASE, REGISTRY_DATABASE]);
  const hba = join(paths.data, 'pg_hba.conf');
  const text = renderPgHba();
  if (!existsSync(hba) || readFileSync(hba, 'utf8') !== text) {
    writeFileSync(hba, text, { mode: 0o600 });
    chownTo(hba, user);
    await query(admin, 'SELECT pg_reload_conf()');
  }
  return created;
}

async function startPrivateCluster(ctx: StackContext, creds: StackCredentials, why: string | undefined): Promise<PartUp> {
  const paths = clusterPaths(ctx);
  const bin = postgresBinDir(ctx.env);
  // initdb and the server refuse to run as root: as root, the cluster belongs to `postgres`.
  const user = isRoot() ? osUser('postgres') : undefined;
  if (isRoot() && !user) {
    throw new MissingDependencyError(PART, 'running as root and there is no `postgres` OS user to own the cluster', 'run `npm run setup` (Debian\'s postgresql package creates the user)');
  }
  privateDir(paths.root, user);
  privateDir(ctx.logDir);
  if (!existsSync(paths.log)) writeFileSync(paths.log, '', { mode: 0o600 });
  chownTo(paths.log, user);
  linkLog(paths);

  if (!existsSync(join(paths.data, 'PG_VERSION'))) {
    // The superuser's password from a file only initdb reads (0600, removed at once), never the command line.
    const pwfile = join(paths.root, '.initdb-password');
    writeFileSync(pwfile, `${creds.TRAWL_POSTGRES_ADMIN_PASSWORD}\n`, { mode: 0o600 });
    chownTo(pwfile, user);
    const init = await run(join(bin, 'initdb'), ['-D', paths.data, '-U', ACCOUNTS.postgresAdmin, '--auth=scram-sha-256', `--pwfile=${pwfile}`, '--encoding=UTF8', '--locale=C'], {
      cwd: paths.root,
      ...(user ? { user } : {}),
    }).finally(() => rmSync(pwfile, { force: true }));
    if (init.code !== 0) {
      throw new PartStartError(PART, `initdb failed (exit ${init.code})`, `check that ${user ? 'the postgres user' : 'you'} can write ${paths.root} and every directory above it is searchable; or set DATABASE_URL`, {
        logTail: init.output.trim().split('\n').slice(-15).join('\n'),
      });
    }
    appendFileSync(join(paths.data, 'postgresql.conf'), "\n# Trawl local stack\ninclude_if_exists = 'trawl.conf'\n");
  }
  const port = await choosePort(ctx, paths);
  writeFileSync(paths.conf, renderClusterConf(port));
  chownTo(paths.conf, user);

  const started = await run(join(bin, 'pg_ctl'), ['-D', paths.data, '-l', paths.log, '-w', '-t', '60', '-s', 'start'], {
    cwd: paths.root,
    timeoutMs: 75_000,
    ...(user ? { user } : {}),
  });
  let pid = Number.NaN;
  try {
    pid = Number(readFileSync(join(paths.data, 'postmaster.pid'), 'utf8').split('\n')[0]);
  } catch {
    // No pid file: the server did not start; pg_ctl's output and the log say why.
  }
  if (started.code !== 0 || !Number.isInteger(pid) || !isAlive(pid)) {
    throw new PartStartError(PART, `pg_ctl start failed (exit ${started.code}) ${started.output.trim()}`, `read ${paths.log}; remove ${paths.root} to start over with an empty cluster`, {
      logTail: logTail([paths.log]),
    });
  }
  writePid(ctx.runDir, PART, pid);
  const admin = clusterUrl(port, ACCOUNTS.postgresAdmin, creds.TRAWL_POSTGRES_ADMIN_PASSWORD, 'postgres');
  const ready = await waitFor(async () => ((await unreachable(admin)) === undefined ? true : undefined), {
    timeoutMs: 15_000,
    alive: () => isAlive(pid),
  });
  if (!ready.ok) {
    throw new PartStartError(PART, `the private cluster does not accept connections on port ${port}`, `read ${paths.log}`, { logTail: logTail([paths.log]) });
  }
  const copied = await copyFromAdopted(ctx, bin, port, creds);
  return privateClusterUp(paths, port, creds, user, 'started', pid, [why, copied]);
}

async function privateClusterUp(paths: ClusterPaths, port: number, creds: StackCredentials, user: OsUser | undefined, action: 'started' | 'reused', pid: number, notes: readonly (string | undefined)[] = []): Promise<PartUp> {
  const created = await securePrivateCluster(paths, port, creds, user);
  const url = projectUrl(port, creds);
  const why = await projectConnects(url);
  if (why) throw new PartStartError(PART, `role ${ACCOUNTS.postgresRole} cannot connect to the private cluster: ${why}`, `read ${paths.log}; remove ${paths.root} to start over with an empty cluster`, { logTail: logTail([paths.log]) });
  const note = [`private cluster on ${port}, scram-sha-256`, createdNote(created), ...notes].filter(Boolean).join(', ');
  return { part: PART, action, endpoint: redactUrl(url), pid, note, env: { DATABASE_URL: url } };
}

/** Why the private cluster rather than the server on 5432: undefined when no such server lets `postgres` in. */
async function trustingServerNote(): Promise<string | undefined> {
  if (await unreachable(withDatabase(DEFAULT_URL, 'postgres'))) return undefined;
  return 'not the server on 5432: it lets `postgres` in without a password, so any local user could read and change Trawl\'s data (TRAWL_POSTGRES_ADOPT_TRUSTING=1 adopts it anyway)';
}

/**
 * Moving from the adopted server on 5432 to the private cluster: each project database the
 * previous `up` used there (stack.env's DATABASE_URL) is copied into the cluster when the
 * cluster's is still empty — pg_dump / pg_restore in one transaction each, as the superusers, the
 * objects then handed to the project's role. The source is left as it was. Returns a note, or
 * undefined when there was nothing to copy.
 */
async function copyFromAdopted(ctx: StackContext, bin: string, port: number, creds: StackCredentials): Promise<string | undefined> {
  const previous = ctx.stackEnv.DATABASE_URL;
  if (!previous) return undefined;
  const before = parseDatabaseUrl(previous);
  if (!isLoopback(before.host) || before.port !== 5432 || port === 5432) return undefined;
  const source = DEFAULT_URL;
  if (await unreachable(withDatabase(source, 'postgres'))) return undefined;
  const admin = clusterUrl(port, ACCOUNTS.postgresAdmin, creds.TRAWL_POSTGRES_ADMIN_PASSWORD, 'postgres');
  // The cluster's databases must exist (owned by the role) before anything is restored into them.
  await ensureRole(admin, ACCOUNTS.postgresRole, creds.TRAWL_POSTGRES_PASSWORD, 'LOGIN CREATEDB NOSUPERUSER');
  await ensureOwnedDatabases(admin, ACCOUNTS.postgresRole, [PROJECT_DATABASE, REGISTRY_DATABASE]);
  const userTables = "SELECT count(*)::int AS n FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE c.relkind IN ('r', 'p') AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname !~ '^pg_'";
  const copied: string[] = [];
  for (const database of [PROJECT_DATABASE, REGISTRY_DATABASE]) {
    if ((await query(withDatabase(source, 'postgres'), 'SELECT 1 FROM pg_database WHERE datname = $1', [database])).rowCount === 0) continue;
    if ((await query(withDatabase(admin, database), userTables)).rows[0].n > 0) continue;
    const dump = join(clusterPaths(ctx).root, `${database}.from-5432.dump`);
    try {
      const dumped = await run(join(bin, 'pg_dump'), ['-Fc', '--no-owner', '--no-privileges', '-f', dump, '-d', withDatabase(source, database)], { timeoutMs: 600_000 });
      if (dumped.code !== 0) throw new PartStartError(PART, `could not copy ${database} from the server on 5432: pg_dump failed (exit ${dumped.code})`, 'start over with `npm run stack -- up`, or copy it by hand (pg_dump | pg_restore) into the private cluster', { logTail: dumped.output.trim().split('\n').slice(-15).join('\n') });
      // The password through the environment, never the command line.
      const target = `postgres://${ACCOUNTS.postgresAdmin}@127.0.0.1:${port}/${encodeURIComponent(database)}`;
      const restored = await run(join(bin, 'pg_restore'), ['--no-owner', '--no-privileges', '--single-transaction', '--exit-on-error', '-d', target, dump], {
        timeoutMs: 600_000,
        env: { ...process.env, PGPASSWORD: creds.TRAWL_POSTGRES_ADMIN_PASSWORD },
      });
      if (restored.code !== 0) throw new PartStartError(PART, `could not copy ${database} from the server on 5432: pg_restore failed (exit ${restored.code})`, `the cluster's ${database} is left empty; \`up\` tries again, or copy it by hand`, { logTail: redactText(restored.output.trim().split('\n').slice(-15).join('\n')) });
    } finally {
      rmSync(dump, { force: true });
    }
    copied.push(database);
  }
  if (copied.length === 0) return undefined;
  // Restored as the superuser: hand everything to the project's role, as for a cluster of an older stack.
  await ensureOwnedDatabases(admin, ACCOUNTS.postgresRole, copied);
  return `copied ${copied.join(' and ')} from the server on 5432 (left there: see README, Credentials of the local stack)`;
}

export async function postgresUp(ctx: StackContext, creds: StackCredentials): Promise<PartUp> {
  const user = userEndpoint(ctx, 'DATABASE_URL');
  if (user) {
    const why = await unreachable(withDatabase(user, 'postgres'));
    if (why) {
      throw new ExternalEndpointError(PART, `DATABASE_URL ${redactUrl(user)} does not answer: ${why}`, 'start that server or fix DATABASE_URL; unset it to let the stack run Postgres');
    }
    const created = await ensureDatabases(user);
    return { part: PART, action: 'external', endpoint: redactUrl(user), note: createdNote(created) ?? 'from DATABASE_URL', env: { DATABASE_URL: undefined } };
  }

  const paths = clusterPaths(ctx);
  const pid = ownedPid(ctx.runDir, PART, paths.data);
  if (pid) {
    const port = recordedPort(paths.conf) ?? 5432;
    const why = await unreachable(clusterUrl(port, ACCOUNTS.postgresAdmin, creds.TRAWL_POSTGRES_ADMIN_PASSWORD, 'postgres'));
    const user = isRoot() ? osUser('postgres') : undefined;
    if (!why) {
      privateDir(paths.root, user); // a cluster of an older stack: its directory was 0755
      return privateClusterUp(paths, port, creds, user, 'reused', pid, [await trustingServerNote()]);
    }
    throw new PartStartError(PART, `the private cluster (pid ${pid}) runs but does not answer on port ${port}: ${why}`, 'run `npm run stack -- down` then `up` again', {
      logTail: logTail([paths.log]),
    });
  }

  const trusting = await trustingServerNote();
  if (trusting && ctx.adoptTrustingPostgres && !ctx.privatePostgres) return serverOn5432(creds);
  return startPrivateCluster(ctx, creds, trusting);
}

/**
 * Debian's server on 5432, which lets `postgres` in without a password: the project's role and
 * databases are made there, and services use the role. The server's pg_hba.conf is not the stack's
 * to change; the note says what it decides.
 */
async function serverOn5432(creds: StackCredentials): Promise<PartUp> {
  await ensureRole(DEFAULT_URL, ACCOUNTS.postgresRole, creds.TRAWL_POSTGRES_PASSWORD, 'LOGIN CREATEDB');
  const created = await ensureOwnedDatabases(DEFAULT_URL, ACCOUNTS.postgresRole, [PROJECT_DATABASE, REGISTRY_DATABASE]);
  const url = projectUrl(5432, creds);
  const why = await unreachable(url);
  if (why) {
    throw new PartStartError(PART, `role ${ACCOUNTS.postgresRole} cannot connect to the server on 5432: ${why}`, `let it in from 127.0.0.1 (a \`host all ${ACCOUNTS.postgresRole} 127.0.0.1/32 scram-sha-256\` line in that server's pg_hba.conf), set DATABASE_URL, or unset TRAWL_POSTGRES_ADOPT_TRUSTING for the private cluster`);
  }
  const note = ['server on 5432, adopted (TRAWL_POSTGRES_ADOPT_TRUSTING=1)', createdNote(created), await serverAuthNote(DEFAULT_URL, ACCOUNTS.postgresRole, PROJECT_DATABASE)].filter(Boolean).join(', ');
  return { part: PART, action: 'external', endpoint: redactUrl(url), pid: listenerPid(5432), note, env: { DATABASE_URL: url } };
}

export async function postgresStatus(ctx: StackContext): Promise<PartStatus> {
  const user = userEndpoint(ctx, 'DATABASE_URL');
  const pid = user ? undefined : ownedPid(ctx.runDir, PART, clusterPaths(ctx).data);
  const url = user ?? ctx.stackEnv.DATABASE_URL ?? DEFAULT_URL;
  const why = await unreachable(url);
  const { host, port } = parseDatabaseUrl(url);
  const shownPid = pid ?? (isLoopback(host) && !why ? listenerPid(port) : undefined);
  return {
    part: PART,
    state: why ? (pid ? 'unhealthy' : 'down') : 'up',
    ours: pid !== undefined,
    endpoint: redactUrl(url),
    ...(shownPid ? { pid: shownPid, rssMb: treeMemoryMb(shownPid) } : {}),
    note: why ?? (user ? 'from DATABASE_URL' : pid ? 'private cluster' : 'external server'),
  };
}

export async function postgresDown(ctx: StackContext): Promise<PartDown> {
  const pid = ownedPid(ctx.runDir, PART, clusterPaths(ctx).data);
  if (!pid) {
    const { port } = parseDatabaseUrl(ctx.stackEnv.DATABASE_URL ?? DEFAULT_URL);
    return { part: PART, action: (await tcpOpen('127.0.0.1', port)) ? 'not-ours' : 'not-running' };
  }
  // SIGINT is Postgres's "fast" shutdown: SIGTERM ("smart") would wait for every app to disconnect.
  const killed = await stopProcess(pid, { signal: 'SIGINT', graceMs: 30_000 });
  removePid(ctx.runDir, PART);
  return { part: PART, action: 'stopped', pid, killed };
}
