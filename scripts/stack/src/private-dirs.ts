/**
 * The stack's state is its owner's alone (issue 32, item 7): every part's directory under
 * TRAWL_HOME is 0700 — Kafka's log, ClickHouse's and S3Proxy's data, the registry's working
 * directory, the private Postgres cluster, the logs and the pid files — and every file holding a
 * credential is 0600 (credentials.ts). A directory made by an older stack is brought to 0700 at
 * each `up`; files inside it keep their modes, which no other user can reach any more.
 *
 * The parts create their own files (Kafka's segments, ClickHouse's parts, S3Proxy's blobs, the JVMs'
 * logs) with the umask they inherit: they are started under umask 077, so what they create is
 * private too, even before its directory is looked at.
 *
 * TRAWL_HOME itself is left as it is: as root, the private cluster runs as the `postgres` user,
 * which must be able to pass through it to reach its own directory.
 */
import { chmodSync, chownSync, mkdirSync, statSync } from 'node:fs';
import type { OsUser } from './os-user.ts';

export const PRIVATE_DIR_MODE = 0o700;
export const PRIVATE_UMASK = 0o077;

/** Makes `dir` (and missing parents) and brings it to 0700, owned by `user` when given (as root). */
export function privateDir(dir: string, user?: OsUser): string {
  mkdirSync(dir, { recursive: true, mode: PRIVATE_DIR_MODE });
  if (user) chownSync(dir, user.uid, user.gid);
  if ((statSync(dir).mode & 0o777) !== PRIVATE_DIR_MODE) chmodSync(dir, PRIVATE_DIR_MODE);
  return dir;
}

/**
 * Runs `start` (a synchronous spawn) under umask 077, so the child and everything it creates
 * inherit it; the process's own umask is restored at once. Where the umask cannot be changed (a
 * worker thread), the child gets the process's umask and the 0700 directories still guard it.
 */
export function withPrivateUmask<T>(start: () => T): T {
  let previous: number | undefined;
  try {
    previous = process.umask(PRIVATE_UMASK);
  } catch {
    previous = undefined;
  }
  try {
    return start();
  } finally {
    if (previous !== undefined) process.umask(previous);
  }
}
