/**
 * The OS user a part runs as: as root, the private Postgres cluster runs as `postgres` (Postgres
 * refuses root), and its directories are made over to that user (private-dirs.ts).
 */
import { spawnSync } from 'node:child_process';

export interface OsUser {
  readonly name: string;
  readonly uid: number;
  readonly gid: number;
}

/** Looks up an OS user; `undefined` when it does not exist. */
export function osUser(name: string): OsUser | undefined {
  const r = spawnSync('getent', ['passwd', name], { encoding: 'utf8' });
  const fields = r.status === 0 ? r.stdout.trim().split(':') : [];
  if (fields.length < 4) return undefined;
  return { name, uid: Number(fields[2]), gid: Number(fields[3]) };
}

export function isRoot(): boolean {
  return typeof process.getuid === 'function' && process.getuid() === 0;
}
