import { execFile } from 'node:child_process';
import { chownSync, existsSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir, userInfo } from 'node:os';
import { delimiter, join } from 'node:path';
import { BrowserError } from '../errors.ts';

/**
 * Where Chromium may run, and how shut in. Chromium renders pages anyone can write, so:
 *
 * - it never runs as root. A worker running as root starts it as a dedicated unprivileged user
 *   (`TRAWL_BROWSER_USER`, default `trawl-browser`, created by scripts/setup) through `setpriv`
 *   with no-new-privs and no supplementary groups; a worker that is not root starts it as itself,
 *   since only root can change users. Root without that user means no browser at all.
 * - its sandbox is on wherever the kernel lets that user create the namespaces Chromium's sandbox
 *   is made of (user, PID and network namespaces: probed with `unshare` as that user). Where it
 *   does not (a kernel or AppArmor that forbids unprivileged user namespaces, Docker's default
 *   seccomp profile), Chromium runs with `--no-sandbox` and the status says so and why;
 *   `TRAWL_BROWSER_SANDBOX=required` refuses to run it unsandboxed instead.
 * - it gets a profile directory of its own, owned by that user, and an environment without the
 *   worker's (no endpoint URL, no credential reaches the browser process).
 *
 * `planContainment` is the pure decision; `containBrowser` gathers the facts from the machine.
 */

export const DEFAULT_BROWSER_USER = 'trawl-browser';

export interface OsUser {
  readonly name: string;
  readonly uid: number;
  readonly gid: number;
}

/**
 * The worker's `browserSandbox` (start-up log line and health output): `on`, `off` (Chromium runs
 * with --no-sandbox; `reason` says why and how to turn it on) or `unavailable` (no browser will be
 * started; `reason` says why). `user` is the OS user Chromium runs as.
 */
export interface BrowserSandboxStatus {
  readonly state: 'on' | 'off' | 'unavailable';
  readonly user: string | null;
  readonly reason: string | null;
}

export interface ContainmentFacts {
  /** The worker's own user. */
  readonly self: OsUser;
  /** The name asked for (TRAWL_BROWSER_USER). */
  readonly browserUserName: string;
  /** Its passwd entry, when it exists. */
  readonly browserUser: OsUser | null;
  /** setpriv's path, when installed. */
  readonly setpriv: string | null;
  /** TRAWL_BROWSER_SANDBOX. */
  readonly sandboxMode: 'auto' | 'required';
}

/** Who Chromium runs as, before knowing whether its sandbox works. */
export type UserPlan = { readonly runAs: OsUser; readonly viaSetpriv: boolean } | { readonly unavailable: string };

export function planUser(f: ContainmentFacts): UserPlan {
  if (f.self.uid !== 0) return { runAs: f.self, viaSetpriv: false };
  const fix = `run scripts/setup (as root it creates "${DEFAULT_BROWSER_USER}") or set TRAWL_BROWSER_USER to an existing unprivileged user`;
  if (!f.browserUser) return { unavailable: `the worker runs as root, Chromium never does, and user "${f.browserUserName}" does not exist: ${fix}` };
  if (f.browserUser.uid === 0) return { unavailable: `TRAWL_BROWSER_USER "${f.browserUserName}" is root: ${fix}` };
  if (!f.setpriv) return { unavailable: 'the worker runs as root and setpriv (util-linux) is not installed to start Chromium as another user' };
  return { runAs: f.browserUser, viaSetpriv: true };
}

/** The status from the user plan and the namespace probe (null: namespaces work; else why not). */
export function planSandbox(user: UserPlan, namespacesUnusable: string | null, mode: ContainmentFacts['sandboxMode']): BrowserSandboxStatus {
  if ('unavailable' in user) return { state: 'unavailable', user: null, reason: user.unavailable };
  if (namespacesUnusable === null) return { state: 'on', user: user.runAs.name, reason: null };
  const why =
    `user "${user.runAs.name}" cannot create the namespaces Chromium's sandbox needs (${namespacesUnusable}); ` +
    'allow unprivileged user namespaces (sysctl kernel.unprivileged_userns_clone=1 on Debian kernels that have it, ' +
    'kernel.apparmor_restrict_unprivileged_userns=0 on Ubuntu, a seccomp profile that allows them in Docker)';
  if (mode === 'required') return { state: 'unavailable', user: user.runAs.name, reason: `TRAWL_BROWSER_SANDBOX=required and ${why}` };
  return { state: 'off', user: user.runAs.name, reason: `Chromium runs without its sandbox: ${why}` };
}

export interface BrowserContainment {
  readonly status: BrowserSandboxStatus;
  /** The user Chromium runs as; null when it may not run. */
  readonly runAs: OsUser | null;
  /** setpriv's path when Chromium is started as another user than the worker's. */
  readonly setpriv: string | null;
}

/** Gathers the facts (user database, setpriv, a namespace probe as the browser's user) and decides. */
export async function containBrowser(env: NodeJS.ProcessEnv = process.env): Promise<BrowserContainment> {
  const mode = env.TRAWL_BROWSER_SANDBOX ?? 'auto';
  if (mode !== 'auto' && mode !== 'required') throw new BrowserError(`TRAWL_BROWSER_SANDBOX must be "auto" or "required", not "${mode}"`);
  const browserUserName = env.TRAWL_BROWSER_USER || DEFAULT_BROWSER_USER;
  const facts: ContainmentFacts = {
    self: currentUser(),
    browserUserName,
    browserUser: await lookupUser(browserUserName),
    setpriv: findProgram('setpriv', env),
    sandboxMode: mode,
  };
  const user = planUser(facts);
  const setpriv = 'runAs' in user && user.viaSetpriv ? facts.setpriv : null;
  const unusable = 'runAs' in user ? await probeNamespaces(user.runAs, setpriv, env) : null;
  return { status: planSandbox(user, unusable, mode), runAs: 'runAs' in user ? user.runAs : null, setpriv };
}

/** `setpriv … --` when Chromium is to run as another user, else nothing. */
export function asUserPrefix(c: BrowserContainment): string[] {
  if (!c.setpriv || !c.runAs) return [];
  return [`--reuid=${c.runAs.uid}`, `--regid=${c.runAs.gid}`, '--clear-groups', '--no-new-privs', '--'];
}

/**
 * A fresh profile directory owned by the browser's user, under TRAWL_BROWSER_PROFILE_DIR (default
 * the system's temporary directory). mkdtemp makes it 0700 with an unguessable name.
 */
export function createProfileDir(c: BrowserContainment, env: NodeJS.ProcessEnv = process.env): string {
  const base = env.TRAWL_BROWSER_PROFILE_DIR || tmpdir();
  mkdirSync(base, { recursive: true });
  const dir = mkdtempSync(join(base, 'trawl-chromium-'));
  if (c.runAs && c.runAs.uid !== process.getuid?.()) chownSync(dir, c.runAs.uid, c.runAs.gid);
  return dir;
}

export function removeProfileDir(dir: string): void {
  rmSync(dir, { recursive: true, force: true, maxRetries: 3 });
}

/** Chromium's environment: what it needs to run and find fonts, its HOME in its profile, nothing of the worker's own. */
export function browserEnv(profileDir: string, env: NodeJS.ProcessEnv = process.env): Record<string, string> {
  const out: Record<string, string> = {
    PATH: env.PATH || '/usr/local/bin:/usr/bin:/bin',
    HOME: profileDir,
    XDG_CONFIG_HOME: join(profileDir, '.config'),
    XDG_CACHE_HOME: join(profileDir, '.cache'),
    LANG: env.LANG || 'C.UTF-8',
  };
  for (const k of ['TZ', 'LC_ALL', 'FONTCONFIG_PATH', 'FONTCONFIG_FILE']) if (env[k]) out[k] = env[k]!;
  return out;
}

function currentUser(): OsUser {
  const uid = process.getuid?.() ?? -1;
  const gid = process.getgid?.() ?? -1;
  let name = String(uid);
  try {
    name = userInfo().username;
  } catch {
    // a uid without a passwd entry (containers run with --user 12345): its number is its name
  }
  return { name, uid, gid };
}

function run(command: string, args: string[], env: NodeJS.ProcessEnv, timeoutMs = 5_000): Promise<{ code: number; out: string }> {
  return new Promise((resolve) => {
    execFile(command, args, { timeout: timeoutMs, env: { PATH: env.PATH ?? '' } }, (err, stdout, stderr) => {
      const code = err ? (typeof (err as { code?: unknown }).code === 'number' ? ((err as { code: number }).code) : -1) : 0;
      resolve({ code, out: `${stdout}${stderr}`.trim() || (err?.message ?? '') });
    });
  });
}

async function lookupUser(name: string): Promise<OsUser | null> {
  if (!/^[a-z_][a-z0-9_-]*\$?$/i.test(name)) throw new BrowserError(`TRAWL_BROWSER_USER "${name}" is not a user name`);
  const { code, out } = await run('getent', ['passwd', name], { PATH: process.env.PATH ?? '/usr/bin:/bin' });
  if (code !== 0) return null;
  const [, , uid, gid] = out.split('\n')[0]!.split(':');
  return { name, uid: Number(uid), gid: Number(gid) };
}

/** null when `user` can create user, PID and network namespaces (what Chromium's sandbox uses); else why not. */
async function probeNamespaces(user: OsUser, setpriv: string | null, env: NodeJS.ProcessEnv): Promise<string | null> {
  const unshare = findProgram('unshare', env);
  if (!unshare) return 'unshare (util-linux) is not installed, so this could not be checked';
  const probe = ['--user', '--pid', '--net', '--fork', 'true'];
  const asUser = setpriv ? [`--reuid=${user.uid}`, `--regid=${user.gid}`, '--clear-groups', '--no-new-privs', '--'] : [];
  const { code, out } = setpriv ? await run(setpriv, [...asUser, unshare, ...probe], env) : await run(unshare, probe, env);
  return code === 0 ? null : out.split('\n')[0] || `unshare exited with ${code}`;
}

/** A program by name on PATH, then in the usual system directories. */
function findProgram(name: string, env: NodeJS.ProcessEnv): string | null {
  const dirs = [...(env.PATH ?? '').split(delimiter).filter(Boolean), '/usr/bin', '/bin', '/usr/sbin', '/sbin'];
  for (const d of dirs) if (existsSync(join(d, name))) return join(d, name);
  return null;
}
