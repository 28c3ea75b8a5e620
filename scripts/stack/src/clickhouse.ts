/**
 * ClickHouse: Debian's clickhouse-server (18.16 on these machines) with the project's own
 * configuration (infra/clickhouse/), rendered into TRAWL_HOME/clickhouse with every path under
 * TRAWL_HOME, so it never touches /var/lib/clickhouse or a system service's ports. It runs as
 * the invoking user: the data is the user's, and 18.16 does not refuse root.
 *
 * Its users (infra/clickhouse/users.xml) all need a password: `default` (the stack's and an
 * operator's), the writer (CLICKHOUSE_URL in stack.env) and the reader (CLICKHOUSE_READ_URL).
 * users.xml is rendered at every `up`, so a server started before the stack had passwords gets them
 * without a restart (ClickHouse rereads the file within seconds).
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { endpoints, redactUrl } from '@trawl/streams';
import { localEndpoints, stackChoice, userEndpoint, type StackContext } from './context.ts';
import { ACCOUNTS, writeSecretFile, type StackCredentials } from './credentials.ts';
import { ExternalEndpointError, MissingDependencyError, PartStartError, PortBusyError } from './errors.ts';
import type { PartDown, PartStatus, PartUp } from './part.ts';
import { privateDir } from './private-dirs.ts';
import { http, tcpOpen, waitFor, type HttpAnswer } from './probe.ts';
import { isAlive, listenerPid, logTail, ownedPid, removePid, spawnDetached, stopProcess, treeMemoryMb, writePid } from './process.ts';

const PART = 'clickhouse';

interface ClickHouseLayout {
  readonly dir: string;
  readonly config: string;
  readonly log: string;
  readonly errorLog: string;
  readonly stdout: string;
}

function layout(ctx: StackContext): ClickHouseLayout {
  const dir = join(ctx.home, 'clickhouse');
  return {
    dir,
    config: join(dir, 'config.xml'),
    log: join(ctx.logDir, 'clickhouse.log'),
    errorLog: join(ctx.logDir, 'clickhouse.err.log'),
    stdout: join(ctx.logDir, 'clickhouse.stdout.log'),
  };
}

function xmlEscape(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Fills `{{NAME}}` placeholders; a placeholder without a value, or a value without a placeholder, is a bug. */
export function renderTemplate(template: string, values: Readonly<Record<string, string | number>>): string {
  const used = new Set<string>();
  const out = template.replace(/\{\{([A-Z0-9_]+)\}\}/g, (_, name: string) => {
    const v = values[name];
    if (v === undefined) throw new Error(`template placeholder {{${name}}} has no value`);
    used.add(name);
    return xmlEscape(String(v));
  });
  const unused = Object.keys(values).filter((k) => !used.has(k));
  if (unused.length > 0) throw new Error(`template has no placeholder for ${unused.join(', ')}`);
  return out;
}

export interface ClickHouseConfigValues {
  readonly dir: string;
  readonly logDir: string;
  readonly httpPort: number;
  readonly tcpPort: number;
}

/** The values of infra/clickhouse/config.xml's placeholders. */
export function clickhouseTemplateValues({ dir, logDir, httpPort, tcpPort }: ClickHouseConfigValues): Record<string, string | number> {
  return {
    LOG_FILE: join(logDir, 'clickhouse.log'),
    ERROR_LOG_FILE: join(logDir, 'clickhouse.err.log'),
    HTTP_PORT: httpPort,
    TCP_PORT: tcpPort,
    DATA_DIR: join(dir, 'data'),
    TMP_DIR: join(dir, 'tmp'),
    USER_FILES_DIR: join(dir, 'user_files'),
    FORMAT_SCHEMA_DIR: join(dir, 'format_schemas'),
  };
}

/**
 * The server command: TRAWL_CLICKHOUSE_BIN, else `clickhouse-server` (Debian puts it in /usr/sbin,
 * which a non-root PATH lacks), else the single `clickhouse` binary of current releases.
 */
export function clickhouseCommand(env: NodeJS.ProcessEnv): { command: string; args: string[] } | undefined {
  if (env.TRAWL_CLICKHOUSE_BIN) return { command: env.TRAWL_CLICKHOUSE_BIN, args: [] };
  const dirs = [...(env.PATH ?? '').split(delimiter).filter(Boolean), '/usr/sbin', '/usr/bin', '/usr/local/bin'];
  for (const d of dirs) if (existsSync(join(d, 'clickhouse-server'))) return { command: join(d, 'clickhouse-server'), args: [] };
  for (const d of dirs) if (existsSync(join(d, 'clickhouse'))) return { command: join(d, 'clickhouse'), args: ['server'] };
  return undefined;
}

/** One statement over the HTTP interface; credentials in the URL become a Basic header (fetch refuses them in URLs). */
export function clickhouseQuery(url: string, sql: string, timeoutMs = 5_000): Promise<HttpAnswer> {
  const u = new URL(url);
  const headers: Record<string, string> = {};
  if (u.username || u.password) {
    headers.authorization = `Basic ${Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString('base64')}`;
    u.username = '';
    u.password = '';
  }
  return http(u.toString(), { method: 'POST', body: sql, headers, timeoutMs });
}

function redact(url: string): string {
  return redactUrl(url).replace(/\/$/, '');
}

/** Whether a ClickHouse answers /ping there (no login needed). */
async function pings(url: string): Promise<boolean> {
  const base = new URL(url);
  base.pathname = '/ping';
  base.username = '';
  base.password = '';
  const ping = await http(base.toString());
  return ping.status === 200 && ping.body.trim() === 'Ok.';
}

/** The server's version when it answers /ping and a query as the URL's user, else `undefined`. */
async function version(url: string): Promise<string | undefined> {
  if (!(await pings(url))) return undefined;
  const v = await clickhouseQuery(url, 'SELECT version()');
  return v.status === 200 ? v.body.trim() : undefined;
}

function sha256(s: string): string {
  return createHash('sha256').update(s).digest('hex');
}

/** The values of infra/clickhouse/users.xml's placeholders: the SHA-256 of each password. */
export function clickhouseUserValues(creds: StackCredentials): Record<string, string> {
  return {
    ADMIN_PASSWORD_SHA256: sha256(creds.TRAWL_CLICKHOUSE_ADMIN_PASSWORD),
    WRITER_PASSWORD_SHA256: sha256(creds.TRAWL_CLICKHOUSE_PASSWORD),
    READER_PASSWORD_SHA256: sha256(creds.TRAWL_CLICKHOUSE_READER_PASSWORD),
  };
}

function withUser(url: string, user: string, password: string): string {
  const u = new URL(url);
  u.username = user;
  u.password = password;
  return u.toString().replace(/\/$/, '');
}

/** The URLs services get (stack.env): the writer's and the reader's. */
export function clickhouseUrls(url: string, creds: StackCredentials): { CLICKHOUSE_URL: string; CLICKHOUSE_READ_URL: string } {
  return {
    CLICKHOUSE_URL: withUser(url, ACCOUNTS.clickhouseWriter, creds.TRAWL_CLICKHOUSE_PASSWORD),
    CLICKHOUSE_READ_URL: withUser(url, ACCOUNTS.clickhouseReader, creds.TRAWL_CLICKHOUSE_READER_PASSWORD),
  };
}

/**
 * Writes TRAWL_HOME/clickhouse/users.xml (0600) when its content changes; true when it did.
 *
 * ClickHouse notices a changed file by its modification time in whole seconds: a rewrite within
 * the second of the version it last read would never be loaded. So the new file's time is moved
 * to a later second than the old one's whenever the clock has not already done so.
 */
function renderUsers(ctx: StackContext, dir: string, creds: StackCredentials): boolean {
  const file = join(dir, 'users.xml');
  const text = renderTemplate(readFileSync(join(ctx.repoRoot, 'infra', 'clickhouse', 'users.xml'), 'utf8'), clickhouseUserValues(creds));
  const before = existsSync(file) ? statSync(file) : undefined;
  if (before && readFileSync(file, 'utf8') === text) return false;
  writeSecretFile(file, text);
  if (before) advanceMtimeSecond(file, before.mtimeMs);
  return true;
}

/** Gives `file` a modification time in a later whole second than `previousMs`, if it is not already. */
export function advanceMtimeSecond(file: string, previousMs: number): void {
  const previousSecond = Math.floor(previousMs / 1000);
  if (Math.floor(statSync(file).mtimeMs / 1000) > previousSecond) return;
  const later = previousSecond + 1;
  utimesSync(file, later, later);
}

async function ensureDatabase(url: string, database: string): Promise<void> {
  const res = await clickhouseQuery(url, `CREATE DATABASE IF NOT EXISTS \`${database.replace(/`/g, '\\`')}\``);
  if (res.status !== 200) {
    throw new PartStartError(PART, `CREATE DATABASE ${database} failed (HTTP ${res.status}): ${res.body.trim()}`, 'read .trawl/logs/clickhouse.err.log');
  }
}

export async function clickhouseUp(ctx: StackContext, creds: StackCredentials): Promise<PartUp> {
  const database = endpoints(ctx.env).clickhouseDatabase;
  const user = userEndpoint(ctx, 'CLICKHOUSE_URL');
  if (user) {
    const v = await version(user);
    if (!v) {
      throw new ExternalEndpointError(PART, `CLICKHOUSE_URL ${redact(user)} does not answer /ping and SELECT version()`, 'start that server or fix CLICKHOUSE_URL; unset it to let the stack run ClickHouse');
    }
    await ensureDatabase(user, database);
    return { part: PART, action: 'external', endpoint: redact(user), note: `${v}, from CLICKHOUSE_URL`, env: { CLICKHOUSE_URL: undefined, CLICKHOUSE_READ_URL: undefined } };
  }

  const l = layout(ctx);
  const url = localEndpoints(ctx.ports).CLICKHOUSE_URL;
  const env = clickhouseUrls(url, creds);
  const writer = env.CLICKHOUSE_URL;
  const marker = `--config-file=${l.config}`;
  const owned = ownedPid(ctx.runDir, PART, marker);
  if (owned) {
    const changed = renderUsers(ctx, l.dir, creds);
    // New users take effect when the server rereads the file (within seconds): until a query
    // without a password is refused, an older, open users.xml may still be the one in force.
    const ok = await waitFor(async () => (changed && (await clickhouseQuery(url, 'SELECT 1')).status === 200 ? undefined : version(writer)), {
      timeoutMs: 30_000,
      alive: () => isAlive(owned),
    });
    if (!ok.ok) {
      throw new PartStartError(PART, `the server (pid ${owned}) runs but does not answer on ${url}${changed ? ' with the users just written' : ''}`, 'run `npm run stack -- down` then `up` again', { logTail: logTail([l.errorLog, l.stdout]) });
    }
    await ensureDatabase(writer, database);
    return { part: PART, action: 'reused', endpoint: url, pid: owned, note: changed ? `${ok.value}, users (re)written` : ok.value, env };
  }
  if (await tcpOpen('127.0.0.1', ctx.ports.clickhouseHttp)) {
    // Someone else's server (another checkout's stack, a system service): used as it lets us in,
    // its users are not the stack's to set.
    const v = await version(url);
    if (v) {
      await ensureDatabase(url, database);
      return { part: PART, action: 'external', endpoint: url, pid: listenerPid(ctx.ports.clickhouseHttp), note: `${v}, already running, not started by the stack`, env: { ...stackChoice('CLICKHOUSE_URL', url), CLICKHOUSE_READ_URL: undefined } };
    }
    if (await pings(url)) {
      throw new PortBusyError(PART, `port ${ctx.ports.clickhouseHttp} is taken by a ClickHouse this stack did not start and cannot log in to`, 'give its URL with credentials in CLICKHOUSE_URL, stop it, or set TRAWL_CLICKHOUSE_HTTP_PORT to a free port');
    }
    throw new PortBusyError(PART, `port ${ctx.ports.clickhouseHttp} is taken by something that is not ClickHouse`, 'stop it, or set TRAWL_CLICKHOUSE_HTTP_PORT to a free port');
  }
  if (await tcpOpen('127.0.0.1', ctx.ports.clickhouseTcp)) {
    throw new PortBusyError(PART, `native port ${ctx.ports.clickhouseTcp} is taken`, 'stop whatever listens there (`ss -ltnp`), or set TRAWL_CLICKHOUSE_TCP_PORT to a free port');
  }

  const cmd = clickhouseCommand(ctx.env);
  if (!cmd) {
    throw new MissingDependencyError(PART, 'clickhouse-server is not installed', 'run `npm run setup` (installs Debian\'s clickhouse-server), set TRAWL_CLICKHOUSE_BIN, or set CLICKHOUSE_URL to a server of yours');
  }
  const values = clickhouseTemplateValues({ dir: l.dir, logDir: ctx.logDir, httpPort: ctx.ports.clickhouseHttp, tcpPort: ctx.ports.clickhouseTcp });
  privateDir(l.dir);
  for (const key of ['DATA_DIR', 'TMP_DIR', 'USER_FILES_DIR', 'FORMAT_SCHEMA_DIR'] as const) mkdirSync(String(values[key]), { recursive: true });
  privateDir(ctx.logDir);
  const infra = join(ctx.repoRoot, 'infra', 'clickhouse');
  writeFileSync(l.config, renderTemplate(readFileSync(join(infra, 'config.xml'), 'utf8'), values));
  renderUsers(ctx, l.dir, creds);

  const pid = spawnDetached({ command: cmd.command, args: [...cmd.args, marker], cwd: l.dir, logFile: l.stdout });
  writePid(ctx.runDir, PART, pid);
  const ok = await waitFor(() => version(writer), { timeoutMs: 60_000, intervalMs: 200, alive: () => isAlive(pid) });
  if (!ok.ok) {
    if (ok.reason === 'exited') removePid(ctx.runDir, PART);
    throw new PartStartError(PART, ok.reason === 'exited' ? 'clickhouse-server exited during start-up' : `clickhouse-server did not answer on ${url} within 60 s`, `read ${l.errorLog}`, {
      logTail: logTail([l.errorLog, l.stdout]),
    });
  }
  await ensureDatabase(writer, database);
  return { part: PART, action: 'started', endpoint: url, pid, note: ok.value, env };
}

export async function clickhouseStatus(ctx: StackContext): Promise<PartStatus> {
  const user = userEndpoint(ctx, 'CLICKHOUSE_URL');
  const local = localEndpoints(ctx.ports).CLICKHOUSE_URL;
  // The stack's own server wants the writer's credentials, which stack.env holds.
  const written = ctx.stackEnv.CLICKHOUSE_URL;
  const url = user ?? (written && new URL(written).port === String(ctx.ports.clickhouseHttp) ? written : local);
  const pid = user ? undefined : ownedPid(ctx.runDir, PART, `--config-file=${layout(ctx).config}`);
  const v = await version(url);
  const shownPid = pid ?? (!user && v ? listenerPid(ctx.ports.clickhouseHttp) : undefined);
  return {
    part: PART,
    state: v ? 'up' : pid ? 'unhealthy' : 'down',
    ours: pid !== undefined,
    endpoint: redact(url),
    ...(shownPid ? { pid: shownPid, rssMb: treeMemoryMb(shownPid) } : {}),
    note: v ? `${v}${user ? ', from CLICKHOUSE_URL' : pid ? '' : ', not started by the stack'}` : 'no answer on /ping',
  };
}

export async function clickhouseDown(ctx: StackContext): Promise<PartDown> {
  const pid = ownedPid(ctx.runDir, PART, `--config-file=${layout(ctx).config}`);
  if (!pid) return { part: PART, action: (await tcpOpen('127.0.0.1', ctx.ports.clickhouseHttp)) ? 'not-ours' : 'not-running' };
  const killed = await stopProcess(pid, { signal: 'SIGTERM', graceMs: 20_000 });
  removePid(ctx.runDir, PART);
  return { part: PART, action: 'stopped', pid, killed };
}
