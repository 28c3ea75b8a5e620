/**
 * The schema registry: Apicurio Registry 3 from Maven Central (`scripts/setup` unpacks its `all`
 * assembly into infra/kafka/target/apicurio-registry), storing in the stack's Postgres, serving
 * the Confluent-compatible API at /apis/ccompat/v7, which @kafkajs/confluent-schema-registry uses
 * as its base URL. SCHEMA_REGISTRY_URL set by the user replaces it.
 *
 * Every API needs HTTP Basic authentication as user `trawl` with a generated password. Apicurio's
 * own authentication wants an OpenID Connect server; the assembly also carries Quarkus's embedded
 * user realm (quarkus-elytron-security-properties-file), which needs none: one user, its password
 * handed over in the environment, and a path policy that lets only /health/* through unasked.
 */
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { redactUrl } from '@trawl/streams';
import { localEndpoints, stackChoice, userEndpoint, type StackContext } from './context.ts';
import { ACCOUNTS, type StackCredentials } from './credentials.ts';
import { jdbcFromDatabaseUrl, type JdbcTarget } from './database-url.ts';
import { ExternalEndpointError, MissingDependencyError, PartStartError, PortBusyError } from './errors.ts';
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

export interface RegistryLaunch {
  readonly jar: string;
  readonly port: number;
  readonly jdbc: JdbcTarget;
  readonly home: string;
  /** See classDataArgs. */
  readonly classData?: readonly string[];
}

/** The JVM's arguments. Credentials are not among them: they go through the environment. */
export function registryJavaArgs({ jar, port, jdbc, home, classData = [] }: RegistryLaunch): string[] {
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
    '-Dapicurio.storage.kind=sql',
    '-Dapicurio.storage.sql.kind=postgresql',
    `-Dapicurio.datasource.url=${jdbc.url}`,
    // The default pool holds 20 connections from the start; a local registry needs a few.
    '-Dapicurio.datasource.jdbc.initial-size=2',
    '-Dapicurio.datasource.jdbc.min-size=2',
    '-Dapicurio.datasource.jdbc.max-size=20',
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

export async function registryUp(ctx: StackContext, databaseUrl: string, creds: StackCredentials): Promise<PartUp> {
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
  const ready = async (): Promise<true | undefined> =>
    (await http(`http://127.0.0.1:${port}/health/ready`)).status === 200 && (await ccompatAnswers(authed)) ? true : undefined;

  let restarted: string | undefined;
  const owned = ownedPid(ctx.runDir, PART, marker(ctx));
  if (owned) {
    // Started by an earlier `up`; give it the time a fresh start gets, in case it is still starting.
    const ok = await waitFor(ready, { timeoutMs: 60_000, alive: () => isAlive(owned) });
    if (!ok.ok) {
      throw new PartStartError(PART, `the registry (pid ${owned}) runs but is not ready`, 'run `npm run stack -- down` then `up` again', { logTail: logTail([log]) });
    }
    // Its storage may have moved (the stack left an adopted Postgres for its private cluster, where
    // postgres.ts copied the registry's database): then it must not go on writing the old one.
    const storedIn = `-Dapicurio.datasource.url=${jdbcFromDatabaseUrl(databaseUrl, REGISTRY_DATABASE).url}`;
    const moved = !commandArgs(owned).includes(storedIn);
    if (!moved && !(await ccompatAnswers(base))) {
      await ensureBackward(authed);
      return { part: PART, action: 'reused', endpoint: base, pid: owned, note: COMPATIBILITY, env };
    }
    // Started before the stack had credentials (it answers anyone), or on the old storage: restart
    // it (its clients retry: schemas are cached, and a restart takes seconds).
    await stopProcess(owned, { signal: 'SIGTERM', graceMs: 20_000 });
    removePid(ctx.runDir, PART);
    restarted = moved ? 'restarted on its database\'s new server' : 'restarted to require a password';
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

  const jar = findRegistryJar(ctx.repoRoot);
  if (!jar) {
    throw new MissingDependencyError(PART, 'Apicurio Registry is not unpacked under infra/kafka/target/apicurio-registry', 'run `npm run setup` (downloads it from Maven Central)');
  }
  await requireJava(PART, ctx.env);
  const jdbc = jdbcFromDatabaseUrl(databaseUrl, REGISTRY_DATABASE);
  const cwd = join(ctx.home, 'registry');
  privateDir(cwd);
  const pid = spawnDetached({
    command: javaCommand(ctx.env),
    args: registryJavaArgs({ jar, port, jdbc, home: ctx.home, classData: classDataArgs(ctx.repoRoot, 'registry') }),
    cwd,
    logFile: log,
    env: { ...ctx.env, APICURIO_DATASOURCE_USERNAME: jdbc.username, APICURIO_DATASOURCE_PASSWORD: jdbc.password, ...registryAuthEnv(creds) },
  });
  writePid(ctx.runDir, PART, pid);
  const ok = await waitFor(ready, { timeoutMs: 120_000, intervalMs: 300, alive: () => isAlive(pid) });
  if (!ok.ok) {
    const why = ok.reason === 'exited' ? 'exited during start-up' : 'was not ready within 120 s';
    if (ok.reason === 'exited') removePid(ctx.runDir, PART);
    throw new PartStartError(PART, `Apicurio Registry ${why}`, `read ${log}; check that Postgres database ${REGISTRY_DATABASE} is reachable at ${jdbc.url}`, {
      logTail: logTail([log]),
    });
  }
  await ensureBackward(authed);
  return { part: PART, action: 'started', endpoint: base, pid, note: restarted ? `${COMPATIBILITY}, ${restarted}` : COMPATIBILITY, env };
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
