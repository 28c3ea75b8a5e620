/**
 * The schema registry: Apicurio Registry 3 from Maven Central (`scripts/setup` unpacks its `all`
 * assembly into infra/kafka/target/apicurio-registry), storing in the stack's Kafka (KafkaSQL: a
 * journal topic, see registry-storage.ts), serving the Confluent-compatible API at
 * /apis/ccompat/v7, which @kafkajs/confluent-schema-registry uses as its base URL.
 * SCHEMA_REGISTRY_URL set by the user replaces it.
 *
 * Every API needs HTTP Basic authentication as user `trawl` with a generated password. Apicurio's
 * own authentication wants an OpenID Connect server; the assembly also carries Quarkus's embedded
 * user realm (quarkus-elytron-security-properties-file), which needs none: one user, its password
 * handed over in the environment, and a path policy that lets only /health/* through unasked.
 */
import { existsSync, readdirSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { join } from 'node:path';
import { redactUrl } from '@trawl/streams';
import { localEndpoints, stackChoice, userEndpoint, type StackContext } from './context.ts';
import { ACCOUNTS, type StackCredentials } from './credentials.ts';
import { jdbcFromDatabaseUrl, withDatabase, type JdbcTarget } from './database-url.ts';
import { ExternalEndpointError, MissingDependencyError, PartStartError, PortBusyError } from './errors.ts';
import type { Logger } from '@trawl/streams';
import { basicAuth, ensureRegistryTopics, exportSchemas, importSchemas, markMovedInPostgres, markStoredInLog, registryTopics, schemasInPostgres, storedInLog, type ExportedSchemas, type RegistryTopics } from './registry-storage.ts';
import type { PartDown, PartStatus, PartUp } from './part.ts';
import { privateDir } from './private-dirs.ts';
import { REGISTRY_DATABASE } from './postgres.ts';
import { http, tcpOpen, waitFor } from './probe.ts';
import { commandArgs, isAlive, logTail, ownedPid, removePid, spawnDetached, stopProcess, treeMemoryMb, writePid } from './process.ts';
import { classDataArgs, javaCommand, requireJava } from './java.ts';

const PART = 'registry';
const CONTENT_TYPE = 'application/vnd.schemaregistry.v1+json';
export const COMPATIBILITY = 'BACKWARD';

function registryLog(ctx: StackContext): string {
  return join(ctx.logDir, 'registry.log');
}

/** Marks the registry JVM as this TRAWL_HOME's, for `down` (see ownedPid). */
function marker(ctx: StackContext): string {
  return `-Dtrawl.home=${ctx.home}`;
}

/** The runner jar of the unpacked assembly, whatever its version. */
export function findRegistryJar(repoRoot: string): string | undefined {
  const dir = join(repoRoot, 'infra', 'kafka', 'target', 'apicurio-registry');
  if (!existsSync(dir)) return undefined;
  const jar = readdirSync(dir).find((f) => /^apicurio-registry-app-.+-runner\.jar$/.test(f));
  return jar ? join(dir, jar) : undefined;
}

/**
 * Where a registry keeps its schemas: the log (KafkaSQL, how the stack runs it), or a Postgres
 * database (how it ran before; started only to move its schemas into the log).
 */
export type RegistryStorage =
  | { readonly kind: 'kafkasql'; readonly brokers: string; readonly topics: RegistryTopics }
  | { readonly kind: 'sql'; readonly jdbc: JdbcTarget };

export interface RegistryLaunch {
  readonly jar: string;
  readonly port: number;
  readonly storage: RegistryStorage;
  readonly home: string;
  /** See classDataArgs. */
  readonly classData?: readonly string[];
}

function storageArgs(storage: RegistryStorage): string[] {
  if (storage.kind === 'sql') {
    return [
      '-Dapicurio.storage.kind=sql',
      '-Dapicurio.storage.sql.kind=postgresql',
      `-Dapicurio.datasource.url=${storage.jdbc.url}`,
      // The default pool holds 20 connections from the start; a local registry needs a few.
      '-Dapicurio.datasource.jdbc.initial-size=2',
      '-Dapicurio.datasource.jdbc.min-size=2',
      '-Dapicurio.datasource.jdbc.max-size=20',
    ];
  }
  return [
    '-Dapicurio.storage.kind=kafkasql',
    `-Dapicurio.kafkasql.bootstrap.servers=${storage.brokers}`,
    `-Dapicurio.kafkasql.topic=${storage.topics.journal}`,
    `-Dapicurio.kafkasql.snapshots.topic=${storage.topics.snapshots}`,
    // Its change notifications (not its state: Apicurio makes this one itself, with the broker's defaults).
    `-Dapicurio.events.kafka.topic=${storage.topics.events}`,
  ];
}

/** The JVM's arguments. Credentials are not among them: they go through the environment. */
export function registryJavaArgs({ jar, port, storage, home, classData = [] }: RegistryLaunch): string[] {
  return [
    '-Xms64m',
    '-Xmx384m',
    // A small service whose clients cache what it answers: the serial collector and the C1
    // compiler alone halve its start-up CPU (11 s to 6 s) and trim its memory, at a peak
    // throughput it never needs.
    '-XX:+UseSerialGC',
    '-XX:TieredStopAtLevel=1',
    '-XX:+ExitOnOutOfMemoryError',
    ...classData,
    `-Dtrawl.home=${home}`,
    `-Dquarkus.http.port=${port}`,
    '-Dquarkus.http.host=127.0.0.1',
    ...storageArgs(storage),
    // Re-registering the same schema, however its JSON is spelled, must return the same id,
    // as Confluent's registry does.
    '-Dapicurio.ccompat.use-canonical-hash=true',
    // Lets tests and tools delete subjects through the Confluent API, as they can with Confluent's.
    '-Dapicurio.rest.deletion.artifact.enabled=true',
    '-Dapicurio.rest.deletion.artifact-version.enabled=true',
    '-Dapicurio.rest.deletion.group.enabled=true',
    // Basic authentication against the embedded realm (users and passwords in the environment,
    // see registryAuthEnv), for every path but the health checks.
    '-Dquarkus.security.users.embedded.enabled=true',
    '-Dquarkus.security.users.embedded.plain-text=true',
    '-Dquarkus.http.auth.basic=true',
    '-Dquarkus.http.auth.permission.everything.paths=/*',
    '-Dquarkus.http.auth.permission.everything.policy=authenticated',
    '-Dquarkus.http.auth.permission.health.paths=/health/*',
    '-Dquarkus.http.auth.permission.health.policy=permit',
    '-jar',
    jar,
  ];
}

/** The registry's user, for the JVM's environment (Quarkus reads QUARKUS_… variables as its settings): never on the command line. */
export function registryAuthEnv(creds: StackCredentials): Record<string, string> {
  const user = ACCOUNTS.registry.toUpperCase();
  return {
    [`QUARKUS_SECURITY_USERS_EMBEDDED_USERS_${user}`]: creds.TRAWL_REGISTRY_PASSWORD,
    [`QUARKUS_SECURITY_USERS_EMBEDDED_ROLES_${user}`]: 'sr-admin',
  };
}

/** The Confluent API base with the registry user's credentials: what services get in stack.env. */
export function registryUrl(base: string, creds: StackCredentials): string {
  const u = new URL(base);
  u.username = ACCOUNTS.registry;
  u.password = creds.TRAWL_REGISTRY_PASSWORD;
  return u.toString().replace(/\/+$/, '');
}

async function ccompatAnswers(base: string): Promise<boolean> {
  return (await http(`${base}/subjects`)).status === 200;
}

async function compatibility(base: string): Promise<string | undefined> {
  const res = await http(`${base}/config`);
  if (res.status !== 200) return undefined;
  const body = JSON.parse(res.body) as { compatibilityLevel?: string; compatibility?: string };
  return body.compatibilityLevel ?? body.compatibility;
}

/** Sets the global compatibility to BACKWARD unless it already is, then reads it back. */
export async function ensureBackward(base: string): Promise<void> {
  if ((await compatibility(base)) === COMPATIBILITY) return;
  const res = await http(`${base}/config`, {
    method: 'PUT',
    headers: { 'content-type': CONTENT_TYPE },
    body: JSON.stringify({ compatibility: COMPATIBILITY }),
  });
  const now = await compatibility(base);
  if (res.status !== 200 || now !== COMPATIBILITY) {
    throw new PartStartError(PART, `cannot set global compatibility to ${COMPATIBILITY} (PUT answered ${res.status}, reads back ${now})`, 'read .trawl/logs/registry.log');
  }
}

/**
 * Starts the registry on the log, or reuses the one this stack started. A registry that kept its
 * schemas in Postgres has them moved into the log first (registry-storage.ts): a running one is
 * stopped, so that nothing is registered during the move (its clients wait and retry, ~30 s once);
 * registries on side ports export and import; only then does the registry on the log take the
 * stack's port, so that no client meets one that lacks an id. `databaseUrl` is where Postgres is
 * (undefined: it is not up, and a stack that has not moved yet waits for it).
 */
export async function registryUp(ctx: StackContext, brokers: readonly string[], databaseUrl: string | undefined, creds: StackCredentials, logger: Logger): Promise<PartUp> {
  const user = userEndpoint(ctx, 'SCHEMA_REGISTRY_URL');
  if (user) {
    const base = user.replace(/\/+$/, '');
    if (!(await ccompatAnswers(base))) {
      throw new ExternalEndpointError(PART, `SCHEMA_REGISTRY_URL ${redactUrl(base)} does not answer GET /subjects`, 'start that registry or fix SCHEMA_REGISTRY_URL (the Confluent API base); unset it to let the stack run one');
    }
    const level = await compatibility(base);
    const note = level === COMPATIBILITY ? `${level}, from SCHEMA_REGISTRY_URL` : `WARNING: global compatibility is ${level ?? 'unknown'}, Trawl expects ${COMPATIBILITY}`;
    return { part: PART, action: 'external', endpoint: redactUrl(base), note, env: { SCHEMA_REGISTRY_URL: undefined } };
  }

  const port = ctx.ports.registry;
  const base = localEndpoints(ctx.ports).SCHEMA_REGISTRY_URL;
  const authed = registryUrl(base, creds);
  const env = { SCHEMA_REGISTRY_URL: authed };
  const log = registryLog(ctx);
  const authorization = basicAuth(ACCOUNTS.registry, creds.TRAWL_REGISTRY_PASSWORD);
  const ready = async (): Promise<true | undefined> =>
    (await http(`http://127.0.0.1:${port}/health/ready`)).status === 200 && (await ccompatAnswers(authed)) ? true : undefined;
  const topics = registryTopics(ctx.env);
  const storage: RegistryStorage = { kind: 'kafkasql', brokers: brokers.join(','), topics };
  const onThisLog = (pid: number) => {
    const args = commandArgs(pid);
    return storageArgs(storage).every((arg) => args.includes(arg));
  };
  privateDir(join(ctx.home, 'registry'));

  let restarted: string | undefined;
  const owned = ownedPid(ctx.runDir, PART, marker(ctx));
  if (owned) {
    // Started by an earlier `up`; give it the time a fresh start gets, in case it is still starting.
    const ok = await waitFor(ready, { timeoutMs: 60_000, alive: () => isAlive(owned) });
    if (!ok.ok) {
      throw new PartStartError(PART, `the registry (pid ${owned}) runs but is not ready`, 'run `npm run stack -- down` then `up` again', { logTail: logTail([log]) });
    }
    await ensureRegistryTopics(ctx, brokers, topics, logger);
    if (onThisLog(owned) && !(await ccompatAnswers(base))) {
      await ensureBackward(authed);
      return { part: PART, action: 'reused', endpoint: base, pid: owned, note: COMPATIBILITY, env };
    }
    // On its old storage (Postgres; its schemas move below, once nothing can register more), or
    // started before the stack had credentials (it answers anyone), or on another Kafka: stopped.
    await stopProcess(owned, { signal: 'SIGTERM', graceMs: 20_000 });
    removePid(ctx.runDir, PART);
    restarted = 'restarted';
  } else if (await tcpOpen('127.0.0.1', port)) {
    if (await ccompatAnswers(base)) {
      await ensureBackward(base);
      return { part: PART, action: 'external', endpoint: base, note: `${COMPATIBILITY}, already running, not started by the stack`, env: stackChoice('SCHEMA_REGISTRY_URL', base) };
    }
    if (await ccompatAnswers(authed)) {
      await ensureBackward(authed);
      return { part: PART, action: 'external', endpoint: base, note: `${COMPATIBILITY}, already running, not started by the stack`, env };
    }
    throw new PortBusyError(PART, `port ${port} is taken by something that is not a schema registry this stack can use`, 'stop it, or set TRAWL_REGISTRY_PORT to a free port');
  }

  if (!owned) await ensureRegistryTopics(ctx, brokers, topics, logger);
  if (!storedInLog(ctx)) {
    if (databaseUrl === undefined) throw new PartStartError(PART, 'Postgres is not up, and the registry may still keep schemas there to move into the log', 'fix postgres first (see its line above)');
    const oldDatabase = withDatabase(databaseUrl, REGISTRY_DATABASE);
    if ((await schemasInPostgres(oldDatabase)) > 0) {
      const moving = await sideRegistry(ctx, { kind: 'sql', jdbc: jdbcFromDatabaseUrl(databaseUrl, REGISTRY_DATABASE) }, creds, (root) => exportSchemas({ root, authorization }));
      await intoTheLog(ctx, storage, creds, authorization, moving);
      await markMovedInPostgres(oldDatabase, topics.journal);
      restarted = `moved ${moving.ids.size} schemas from Postgres into the log`;
    }
  }
  const pid = spawnDetached({
    command: javaCommand(ctx.env),
    args: registryJavaArgs({ jar: await registryJar(ctx), port, storage, home: ctx.home, classData: classDataArgs(ctx.repoRoot, 'registry') }),
    cwd: join(ctx.home, 'registry'),
    logFile: log,
    env: { ...ctx.env, ...registryAuthEnv(creds) },
  });
  writePid(ctx.runDir, PART, pid);
  const ok = await waitFor(ready, { timeoutMs: 120_000, intervalMs: 300, alive: () => isAlive(pid) });
  if (!ok.ok) {
    const why = ok.reason === 'exited' ? 'exited during start-up' : 'was not ready within 120 s';
    if (ok.reason === 'exited') removePid(ctx.runDir, PART);
    throw new PartStartError(PART, `Apicurio Registry ${why}`, `read ${log}; check that Kafka at ${brokers.join(',')} is up and holds topic ${topics.journal}`, {
      logTail: logTail([log]),
    });
  }
  markStoredInLog(ctx);
  await ensureBackward(authed);
  return { part: PART, action: 'started', endpoint: base, pid, note: restarted ? `${COMPATIBILITY}, ${restarted}` : `${COMPATIBILITY}, schemas in ${topics.journal}`, env };
}

async function registryJar(ctx: StackContext): Promise<string> {
  const jar = findRegistryJar(ctx.repoRoot);
  if (!jar) {
    throw new MissingDependencyError(PART, 'Apicurio Registry is not unpacked under infra/kafka/target/apicurio-registry', 'run `npm run setup` (downloads it from Maven Central)');
  }
  await requireJava(PART, ctx.env);
  return jar;
}

/** Imports `moving` into the log through a registry on a side port (every id compared), then stops it. */
async function intoTheLog(ctx: StackContext, storage: RegistryStorage, creds: StackCredentials, authorization: string, moving: ExportedSchemas): Promise<void> {
  await sideRegistry(ctx, storage, creds, (root) => importSchemas({ root, authorization }, moving));
}

/** Runs `work` against a registry on `storage` started on a free port for it, and stops that registry. */
async function sideRegistry<T>(ctx: StackContext, storage: RegistryStorage, creds: StackCredentials, work: (root: string) => Promise<T>): Promise<T> {
  const port = await freePort();
  const log = join(ctx.logDir, 'registry-move.log');
  const jdbc = storage.kind === 'sql' ? { APICURIO_DATASOURCE_USERNAME: storage.jdbc.username, APICURIO_DATASOURCE_PASSWORD: storage.jdbc.password } : {};
  const pid = spawnDetached({
    command: javaCommand(ctx.env),
    args: registryJavaArgs({ jar: await registryJar(ctx), port, storage, home: ctx.home, classData: classDataArgs(ctx.repoRoot, 'registry') }),
    cwd: join(ctx.home, 'registry'),
    logFile: log,
    env: { ...ctx.env, ...jdbc, ...registryAuthEnv(creds) },
  });
  try {
    const ok = await waitFor(async () => ((await http(`http://127.0.0.1:${port}/health/ready`)).status === 200 ? true : undefined), { timeoutMs: 120_000, intervalMs: 300, alive: () => isAlive(pid) });
    if (!ok.ok) throw new PartStartError(PART, `a registry on ${storage.kind} storage, started to move the schemas into the log, did not start`, `read ${log}`, { logTail: logTail([log]) });
    return await work(`http://127.0.0.1:${port}`);
  } finally {
    await stopProcess(pid, { signal: 'SIGTERM', graceMs: 20_000 });
  }
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

export async function registryStatus(ctx: StackContext): Promise<PartStatus> {
  const user = userEndpoint(ctx, 'SCHEMA_REGISTRY_URL');
  const local = localEndpoints(ctx.ports).SCHEMA_REGISTRY_URL;
  const written = ctx.stackEnv.SCHEMA_REGISTRY_URL;
  const base = (user ?? (written && new URL(written).port === String(ctx.ports.registry) ? written : local)).replace(/\/+$/, '');
  const pid = user ? undefined : ownedPid(ctx.runDir, PART, marker(ctx));
  const ok = await ccompatAnswers(base);
  const level = ok ? await compatibility(base) : undefined;
  return {
    part: PART,
    state: ok ? 'up' : pid ? 'unhealthy' : 'down',
    ours: pid !== undefined,
    endpoint: redactUrl(base),
    ...(pid ? { pid, rssMb: treeMemoryMb(pid) } : {}),
    note: ok ? `compatibility ${level ?? 'unknown'}${user ? ', from SCHEMA_REGISTRY_URL' : pid ? '' : ', not started by the stack'}` : 'no answer on GET /subjects',
  };
}

export async function registryDown(ctx: StackContext): Promise<PartDown> {
  const pid = ownedPid(ctx.runDir, PART, marker(ctx));
  if (!pid) return { part: PART, action: (await tcpOpen('127.0.0.1', ctx.ports.registry)) ? 'not-ours' : 'not-running' };
  const killed = await stopProcess(pid, { signal: 'SIGTERM', graceMs: 20_000 });
  removePid(ctx.runDir, PART);
  return { part: PART, action: 'stopped', pid, killed };
}
