/**
 * Object storage: S3Proxy (`org.gaul:s3proxy`, its self-contained jar from Maven Central, which
 * `scripts/setup` copies to infra/s3proxy/target/s3proxy.jar) with the filesystem backend under
 * TRAWL_HOME/s3/data, on TRAWL_S3_PORT (default 9100: S3's customary 9000 is the local
 * ClickHouse's native port). It serves the S3 API the content store (@trawl/content) writes page
 * bodies to; TRAWL_S3_URL set by the user (AWS, MinIO, Ceph) replaces it.
 *
 * It requires signed requests: access key `trawl`, its secret generated (TRAWL_S3_SECRET in
 * credentials.env) and written into TRAWL_HOME/s3/s3proxy.conf (0600), never on a command line.
 * Services get both in TRAWL_S3_URL (`http://trawl:SECRET@127.0.0.1:9100`). The health check is an
 * authenticated ListBuckets (signature V2, which S3Proxy accepts beside V4 and which needs only an
 * HMAC), so "up" means the credentials work; `up` also creates the bucket (TRAWL_S3_BUCKET).
 */
import { createHmac } from 'node:crypto';
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ENDPOINT_DEFAULTS, redactUrl } from '@trawl/streams';
import { stackChoice, userEndpoint, type StackContext } from './context.ts';
import { ACCOUNTS, writeSecretFile, type StackCredentials } from './credentials.ts';
import { ExternalEndpointError, MissingDependencyError, PartStartError, PortBusyError } from './errors.ts';
import { javaCommand, requireJava } from './java.ts';
import type { PartDown, PartStatus, PartUp } from './part.ts';
import { privateDir } from './private-dirs.ts';
import { http, tcpOpen, waitFor } from './probe.ts';
import { isAlive, logTail, ownedPid, removePid, spawnDetached, stopProcess, treeMemoryMb, writePid } from './process.ts';

const PART = 's3';

export function s3proxyJar(repoRoot: string): string {
  return join(repoRoot, 'infra', 's3proxy', 'target', 's3proxy.jar');
}

function s3Log(ctx: StackContext): string {
  return join(ctx.logDir, 's3proxy.log');
}

/** Marks the S3Proxy JVM as this TRAWL_HOME's, for `down` (see ownedPid). */
function marker(ctx: StackContext): string {
  return `-Dtrawl.home=${ctx.home}`;
}

export interface S3ProxyConfig {
  readonly port: number;
  readonly dataDir: string;
  readonly accessKey: string;
  readonly secret: string;
}

/** S3Proxy's properties file: it reads its credentials from here, so they stay off the command line. */
export function s3proxyProperties({ port, dataDir, accessKey, secret }: S3ProxyConfig): string {
  return [
    `s3proxy.endpoint=http://127.0.0.1:${port}`,
    's3proxy.authorization=aws-v2-or-v4',
    `s3proxy.identity=${accessKey}`,
    `s3proxy.credential=${secret}`,
    'jclouds.provider=filesystem',
    `jclouds.filesystem.basedir=${dataDir}`,
    '',
  ].join('\n');
}

export function s3JavaArgs(jar: string, properties: string, home: string): string[] {
  return ['-Xms32m', '-Xmx256m', '-XX:+UseSerialGC', '-XX:TieredStopAtLevel=1', '-XX:+ExitOnOutOfMemoryError', `-Dtrawl.home=${home}`, '-jar', jar, '--properties', properties];
}

/** The endpoint with the stack's credentials: what services get in stack.env. */
export function s3Url(port: number, creds: StackCredentials): string {
  const u = new URL(`http://127.0.0.1:${port}`);
  u.username = ACCOUNTS.s3;
  u.password = creds.TRAWL_S3_SECRET;
  return u.toString().replace(/\/+$/, '');
}

/** A request signed with AWS signature V2 (path-style): enough for a health check and a bucket. */
async function s3Request(url: string, method: 'GET' | 'PUT', path: string): Promise<{ status: number; body: string }> {
  const u = new URL(url);
  const date = new Date().toUTCString();
  const headers: Record<string, string> = { date };
  if (u.username) {
    const signature = createHmac('sha1', decodeURIComponent(u.password)).update(`${method}\n\n\n${date}\n${path}`).digest('base64');
    headers.authorization = `AWS ${decodeURIComponent(u.username)}:${signature}`;
  }
  return http(`${u.protocol}//${u.host}${path}`, { method, headers, ...(method === 'PUT' ? { body: '' } : {}) });
}

/** True when an S3 server answers ListBuckets with these credentials. */
async function listsBuckets(url: string): Promise<boolean> {
  const res = await s3Request(url, 'GET', '/');
  return res.status === 200 && res.body.includes('ListAllMyBucketsResult');
}

/** Something that speaks S3 (an error document counts): tells "not S3" from "S3 with other credentials". */
async function speaksS3(url: string): Promise<boolean> {
  const res = await s3Request(url, 'GET', '/');
  return res.status !== 0 && (res.body.includes('ListAllMyBucketsResult') || res.body.includes('<Error>'));
}

async function ensureBucket(url: string, bucket: string): Promise<string> {
  const res = await s3Request(url, 'PUT', `/${bucket}`);
  if (res.status === 200) return `bucket ${bucket} created`;
  if (res.status === 409) return `bucket ${bucket}`;
  throw new PartStartError(PART, `cannot create bucket ${bucket} (PUT answered ${res.status})`, 'read .trawl/logs/s3proxy.log', { logTail: res.body.slice(0, 500) });
}

function bucketOf(ctx: StackContext): string {
  return ctx.env.TRAWL_S3_BUCKET || ctx.stackEnv.TRAWL_S3_BUCKET || ENDPOINT_DEFAULTS.TRAWL_S3_BUCKET;
}

export async function s3Up(ctx: StackContext, creds: StackCredentials): Promise<PartUp> {
  const bucketEnv = stackChoice('TRAWL_S3_BUCKET', bucketOf(ctx));
  const user = userEndpoint(ctx, 'TRAWL_S3_URL');
  if (user) {
    if (!(await speaksS3(user))) {
      throw new ExternalEndpointError(PART, `TRAWL_S3_URL ${redactUrl(user)} does not answer as an S3 server`, 'start that server or fix TRAWL_S3_URL; unset it to let the stack run S3Proxy');
    }
    // The content store creates its bucket itself when it can; an external server's policy is its owner's.
    return { part: PART, action: 'external', endpoint: redactUrl(user), note: 'from TRAWL_S3_URL', env: { TRAWL_S3_URL: undefined, ...bucketEnv } };
  }

  const port = ctx.ports.s3;
  const authed = s3Url(port, creds);
  const env = { TRAWL_S3_URL: authed, ...bucketEnv };
  const endpoint = `http://127.0.0.1:${port}`;
  const log = s3Log(ctx);
  const ready = async (): Promise<true | undefined> => ((await listsBuckets(authed)) ? true : undefined);

  const owned = ownedPid(ctx.runDir, PART, marker(ctx));
  if (owned) {
    const ok = await waitFor(ready, { timeoutMs: 60_000, alive: () => isAlive(owned) });
    if (!ok.ok) throw new PartStartError(PART, `S3Proxy (pid ${owned}) runs but does not answer ListBuckets`, 'run `npm run stack -- down` then `up` again', { logTail: logTail([log]) });
    return { part: PART, action: 'reused', endpoint, pid: owned, note: await ensureBucket(authed, bucketOf(ctx)), env };
  }
  if (await tcpOpen('127.0.0.1', port)) {
    if (await listsBuckets(authed)) return { part: PART, action: 'external', endpoint, note: `${await ensureBucket(authed, bucketOf(ctx))}, already running, not started by the stack`, env };
    throw new PortBusyError(PART, `port ${port} is taken by something that is not an S3 server this stack can use`, 'stop it, give its URL with credentials in TRAWL_S3_URL, or set TRAWL_S3_PORT to a free port');
  }

  const jar = s3proxyJar(ctx.repoRoot);
  if (!existsSync(jar)) throw new MissingDependencyError(PART, 'S3Proxy is not resolved (infra/s3proxy/target/s3proxy.jar)', 'run `npm run setup` (resolves it from Maven Central)');
  await requireJava(PART, ctx.env);
  const dir = join(ctx.home, 's3');
  const dataDir = join(privateDir(dir), 'data');
  mkdirSync(dataDir, { recursive: true });
  const properties = join(dir, 's3proxy.conf');
  writeSecretFile(properties, s3proxyProperties({ port, dataDir, accessKey: ACCOUNTS.s3, secret: creds.TRAWL_S3_SECRET }));
  const pid = spawnDetached({ command: javaCommand(ctx.env), args: s3JavaArgs(jar, properties, ctx.home), cwd: dir, logFile: log, env: ctx.env });
  writePid(ctx.runDir, PART, pid);
  const ok = await waitFor(ready, { timeoutMs: 90_000, intervalMs: 300, alive: () => isAlive(pid) });
  if (!ok.ok) {
    if (ok.reason === 'exited') removePid(ctx.runDir, PART);
    throw new PartStartError(PART, `S3Proxy ${ok.reason === 'exited' ? 'exited during start-up' : 'did not answer ListBuckets within 90 s'}`, `read ${log}`, { logTail: logTail([log]) });
  }
  return { part: PART, action: 'started', endpoint, pid, note: await ensureBucket(authed, bucketOf(ctx)), env };
}

export async function s3Status(ctx: StackContext): Promise<PartStatus> {
  const user = userEndpoint(ctx, 'TRAWL_S3_URL');
  const url = user ?? ctx.stackEnv.TRAWL_S3_URL ?? `http://127.0.0.1:${ctx.ports.s3}`;
  const pid = user ? undefined : ownedPid(ctx.runDir, PART, marker(ctx));
  // Without stack.env's credentials, an S3 error document still says a server is there.
  const ok = new URL(url).username ? await listsBuckets(url) : await speaksS3(url);
  return {
    part: PART,
    state: ok ? 'up' : pid ? 'unhealthy' : 'down',
    ours: pid !== undefined,
    endpoint: redactUrl(url),
    ...(pid ? { pid, rssMb: treeMemoryMb(pid) } : {}),
    note: ok ? `bucket ${bucketOf(ctx)}${user ? ', from TRAWL_S3_URL' : pid ? '' : ', not started by the stack'}` : 'no answer to an authenticated ListBuckets',
  };
}

export async function s3Down(ctx: StackContext): Promise<PartDown> {
  const pid = ownedPid(ctx.runDir, PART, marker(ctx));
  if (!pid) return { part: PART, action: (await tcpOpen('127.0.0.1', ctx.ports.s3)) ? 'not-ours' : 'not-running' };
  const killed = await stopProcess(pid, { signal: 'SIGTERM', graceMs: 15_000 });
  removePid(ctx.runDir, PART);
  return { part: PART, action: 'stopped', pid, killed };
}
