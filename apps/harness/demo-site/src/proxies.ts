/**
 * Real forward proxies for tests and the local stack: Debian's `tinyproxy` (HTTP, CONNECT) and
 * `microsocks` (SOCKS5), each started on a free port of 127.0.0.1 with its own configuration in a
 * temporary directory, never as a system service (scripts/setup installs the programs).
 *
 * What lets a test tell a proxied request from a direct one:
 * - tinyproxy adds `Via: 1.1 <PROXY_VIA_NAME>` to every request it forwards (plain HTTP; a CONNECT
 *   tunnel carries bytes it cannot touch), and logs each request in its log (`log()`);
 * - microsocks connects out from {@link PROXY_EGRESS_ADDRESS} (127.0.0.2, `-b`), so the site sees the
 *   request come from there and not from 127.0.0.1, and logs each tunnel it opens.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, connect, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** The name tinyproxy puts in its `Via` header. */
export const PROXY_VIA_NAME = 'trawl-test-proxy';
/** The address microsocks connects out from: a request from it came through the SOCKS proxy. */
export const PROXY_EGRESS_ADDRESS = '127.0.0.2';

export interface ProxyCredentials {
  readonly username: string;
  readonly password: string;
}

export interface RunningProxy {
  readonly kind: 'http' | 'socks5';
  /** `http://127.0.0.1:<port>` or `socks5://127.0.0.1:<port>`, without credentials. */
  readonly url: string;
  readonly port: number;
  /** Set when the proxy asks for them (tinyproxy BasicAuth, microsocks -u/-P). */
  readonly credentials: ProxyCredentials | null;
  /** The proxy's own log so far (tinyproxy: every request line; microsocks: every tunnel). */
  log(): string;
  /** Stops the proxy (SIGTERM, then SIGKILL) and removes its directory. */
  close(): Promise<void>;
}

export interface ProxyOptions {
  /** Ask for these credentials (407 / SOCKS5 user-password auth without them). */
  readonly credentials?: ProxyCredentials;
}

/** tinyproxy on a free port: forwards plain HTTP with a Via header, tunnels CONNECT to any port. */
export async function startHttpProxy(options: ProxyOptions = {}): Promise<RunningProxy> {
  const dir = mkdtempSync(join(tmpdir(), 'trawl-tinyproxy-'));
  const port = await freePort();
  const logFile = join(dir, 'tinyproxy.log');
  const lines = [
    `Port ${port}`,
    'Listen 127.0.0.1',
    'Timeout 30',
    'MaxClients 200',
    'Allow 127.0.0.1',
    `ViaProxyName "${PROXY_VIA_NAME}"`,
    // Connect (the request lines) is the level that names each request; Info adds noise per connection.
    'LogLevel Connect',
    `LogFile "${logFile}"`,
    // No ConnectPort line: CONNECT to any port (the harness's sites are on high ports).
    ...(options.credentials ? [`BasicAuth ${options.credentials.username} ${options.credentials.password}`] : []),
  ];
  const conf = join(dir, 'tinyproxy.conf');
  writeFileSync(conf, lines.join('\n') + '\n');
  // -d: stay in the foreground, so the child is the proxy and dies with its kill.
  const child = spawn('tinyproxy', ['-d', '-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] });
  return running('http', child, port, dir, options, () => readOr(logFile));
}

/** microsocks on a free port, connecting out from 127.0.0.2. */
export async function startSocksProxy(options: ProxyOptions = {}): Promise<RunningProxy> {
  const dir = mkdtempSync(join(tmpdir(), 'trawl-microsocks-'));
  const port = await freePort();
  const auth = options.credentials ? ['-u', options.credentials.username, '-P', options.credentials.password] : [];
  // microsocks logs each tunnel to stderr (unbuffered), which running() keeps.
  const child = spawn('microsocks', ['-i', '127.0.0.1', '-p', String(port), '-b', PROXY_EGRESS_ADDRESS, ...auth], { stdio: ['ignore', 'ignore', 'pipe'] });
  return running('socks5', child, port, dir, options, (stderr) => stderr);
}

async function running(kind: 'http' | 'socks5', child: ChildProcess, port: number, dir: string, options: ProxyOptions, log: (stderr: string) => string): Promise<RunningProxy> {
  let err = '';
  child.stderr!.on('data', (c: Buffer) => (err += c.toString()));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const spawnError = new Promise<never>((_, reject) => child.once('error', (e) => reject(new Error(`${kind === 'http' ? 'tinyproxy' : 'microsocks'} could not start (${e.message}); scripts/setup installs it`))));
  spawnError.catch(() => undefined);
  const close = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 2_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    await Promise.race([waitForPort(port, 5_000), spawnError]);
  } catch (e) {
    await close();
    throw new Error(`${(e as Error).message}${err ? `: ${err.trim().split('\n').slice(-3).join(' | ')}` : ''}`);
  }
  return { kind, url: `${kind}://127.0.0.1:${port}`, port, credentials: options.credentials ?? null, log: () => log(err), close };
}

function readOr(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

/** A port nothing listens on now (the kernel's pick, released for the proxy to take). */
async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

async function waitForPort(port: number, timeoutMs: number): Promise<void> {
  const until = Date.now() + timeoutMs;
  for (;;) {
    const ok = await new Promise<boolean>((resolve) => {
      const c = connect({ host: '127.0.0.1', port }, () => {
        c.destroy();
        resolve(true);
      });
      c.once('error', () => resolve(false));
    });
    if (ok) return;
    if (Date.now() > until) throw new Error(`proxy did not listen on 127.0.0.1:${port} within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
