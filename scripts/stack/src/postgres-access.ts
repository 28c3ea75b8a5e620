/**
 * Who may use the stack's Postgres, and with what. Services connect as the project's role
 * (`trawl`: LOGIN, CREATEDB for the tests' throw-away databases, not a superuser) with a generated
 * password; it owns the project's databases and everything in them. Passwords are sent to the
 * server as SCRAM-SHA-256 verifiers computed here, so the plain text is in no server log.
 *
 * On a private cluster the stack also owns the server's configuration: the superuser gets a
 * password and pg_hba.conf asks every TCP connection for scram-sha-256. On a server it does not own
 * (Debian's service on 5432), pg_hba.conf is that server's: `serverAuthNote` reads what it decides
 * for 127.0.0.1 and says so, since a `trust` line there admits anyone on the machine as any role,
 * password or not.
 */
import { createHash, createHmac, pbkdf2Sync, randomBytes } from 'node:crypto';
import { withDatabase } from './database-url.ts';
import { query } from './pg-client.ts';

/** A SCRAM-SHA-256 verifier for `password`, in the form `pg_authid.rolpassword` stores (RFC 5803). */
export function scramVerifier(password: string, salt: Buffer = randomBytes(16), iterations = 4096): string {
  const salted = pbkdf2Sync(password.normalize('NFKC'), salt, iterations, 32, 'sha256');
  const clientKey = createHmac('sha256', salted).update('Client Key').digest();
  const storedKey = createHash('sha256').update(clientKey).digest();
  const serverKey = createHmac('sha256', salted).update('Server Key').digest();
  return `SCRAM-SHA-256$${iterations}:${salt.toString('base64')}$${storedKey.toString('base64')}:${serverKey.toString('base64')}`;
}

/** Whether a stored verifier is the one for `password` (so an unchanged password is not set again). */
export function scramMatches(stored: string | null, password: string): boolean {
  const m = /^SCRAM-SHA-256\$(\d+):([^$]+)\$([^:]+):(.+)$/.exec(stored ?? '');
  if (!m) return false;
  return scramVerifier(password, Buffer.from(m[2]!, 'base64'), Number(m[1])) === stored;
}

/** A SQL string literal of a verifier (base64 and `$:` only, but quoted properly all the same). */
function literal(s: string): string {
  return `'${s.replace(/'/g, "''")}'`;
}

function ident(s: string): string {
  return `"${s.replace(/"/g, '""')}"`;
}

export type RoleChange = 'created' | 'password set' | 'unchanged';

/**
 * Makes `role` exist with `password` and the given attributes (superuser connection). Reads the
 * stored verifier first: several stacks on one server (one per checkout) share the role, and one
 * that sets its own password on every start would lock the others out.
 */
export async function ensureRole(adminUrl: string, role: string, password: string, attributes = 'LOGIN'): Promise<RoleChange> {
  const { rows } = await query(withDatabase(adminUrl, 'postgres'), 'SELECT rolpassword FROM pg_authid WHERE rolname = $1', [role]);
  if (rows.length === 0) {
    try {
      await query(withDatabase(adminUrl, 'postgres'), `CREATE ROLE ${ident(role)} ${attributes} PASSWORD ${literal(scramVerifier(password))}`);
      return 'created';
    } catch (err) {
      if ((err as { code?: string }).code !== '42710') throw err; // created meanwhile by another `up`
    }
  }
  const stored = rows[0]?.rolpassword as string | null | undefined;
  if (scramMatches(stored ?? null, password)) return 'unchanged';
  await query(withDatabase(adminUrl, 'postgres'), `ALTER ROLE ${ident(role)} ${attributes} PASSWORD ${literal(scramVerifier(password))}`);
  return 'password set';
}

/**
 * Every database in `names` exists and belongs to `role`, with all it holds: a database made
 * before the stack had a role (tables created by `postgres`) is handed over, or the role could not
 * migrate its own schema. Returns the names it created.
 */
export async function ensureOwnedDatabases(adminUrl: string, role: string, names: readonly string[]): Promise<string[]> {
  const admin = withDatabase(adminUrl, 'postgres');
  const created: string[] = [];
  for (const name of [...new Set(names)]) {
    const { rows } = await query(admin, 'SELECT pg_get_userbyid(datdba) AS owner FROM pg_database WHERE datname = $1', [name]);
    if (rows.length === 0) {
      try {
        await query(admin, `CREATE DATABASE ${ident(name)} OWNER ${ident(role)}`);
        created.push(name);
        continue;
      } catch (err) {
        // Another `up` (or a colleague's test run) created it between our check and our create.
        const code = (err as { code?: string }).code;
        if (code !== '42P04' && code !== '23505') throw err;
      }
    }
    if (rows[0]?.owner !== role) await query(admin, `ALTER DATABASE ${ident(name)} OWNER TO ${ident(role)}`);
    await query(withDatabase(adminUrl, name), handOverObjects(role));
  }
  return created;
}

/**
 * A DO block giving `role` every table, view, sequence, routine, type and schema of the current
 * database that someone else owns (system schemas aside). Idempotent, and cheap when nothing is to
 * do. Sequences owned by a column move with their table; `public` belongs to the database owner.
 */
export function handOverObjects(role: string): string {
  const r = literal(role);
  return `DO $$
DECLARE
  target oid := (SELECT oid FROM pg_roles WHERE rolname = ${r});
  x record;
BEGIN
  FOR x IN SELECT format('ALTER %s %I.%I OWNER TO %I', CASE c.relkind WHEN 'v' THEN 'VIEW' WHEN 'm' THEN 'MATERIALIZED VIEW' WHEN 'f' THEN 'FOREIGN TABLE' ELSE 'TABLE' END, n.nspname, c.relname, ${r}) AS stmt
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE c.relkind IN ('r', 'p', 'v', 'm', 'f') AND c.relowner <> target AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname !~ '^pg_'
  LOOP EXECUTE x.stmt; END LOOP;
  FOR x IN SELECT format('ALTER SEQUENCE %I.%I OWNER TO %I', n.nspname, c.relname, ${r}) AS stmt
    FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
    WHERE c.relkind = 'S' AND c.relowner <> target AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname !~ '^pg_'
      AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_class'::regclass AND d.objid = c.oid AND d.deptype IN ('a', 'i'))
  LOOP EXECUTE x.stmt; END LOOP;
  FOR x IN SELECT format('ALTER ROUTINE %s OWNER TO %I', p.oid::regprocedure, ${r}) AS stmt
    FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
    WHERE p.proowner <> target AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname !~ '^pg_'
      AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_proc'::regclass AND d.objid = p.oid AND d.deptype = 'e')
  LOOP EXECUTE x.stmt; END LOOP;
  FOR x IN SELECT format('ALTER %s %I.%I OWNER TO %I', CASE t.typtype WHEN 'd' THEN 'DOMAIN' ELSE 'TYPE' END, n.nspname, t.typname, ${r}) AS stmt
    FROM pg_type t JOIN pg_namespace n ON n.oid = t.typnamespace
    WHERE t.typowner <> target AND n.nspname NOT IN ('pg_catalog', 'information_schema') AND n.nspname !~ '^pg_'
      AND (t.typtype IN ('e', 'd', 'r', 'm') OR (t.typtype = 'c' AND (SELECT relkind FROM pg_class WHERE oid = t.typrelid) = 'c'))
      AND NOT EXISTS (SELECT 1 FROM pg_depend d WHERE d.classid = 'pg_type'::regclass AND d.objid = t.oid AND d.deptype = 'e')
  LOOP EXECUTE x.stmt; END LOOP;
  FOR x IN SELECT format('ALTER SCHEMA %I OWNER TO %I', n.nspname, ${r}) AS stmt
    FROM pg_namespace n
    WHERE n.nspowner <> target AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'public') AND n.nspname !~ '^pg_'
  LOOP EXECUTE x.stmt; END LOOP;
END $$`;
}

/** The private cluster's pg_hba.conf: TCP on loopback only (the server listens nowhere else), always with a password. */
export function renderPgHba(): string {
  return [
    '# Written by the Trawl local stack at every start; edit scripts/stack/src/postgres-access.ts instead.',
    '# TCP only (no Unix socket), from this machine, every role with a SCRAM-SHA-256 password.',
    '# TYPE  DATABASE  USER  ADDRESS       METHOD',
    'host    all       all   127.0.0.1/32  scram-sha-256',
    'host    all       all   ::1/128       scram-sha-256',
    '',
  ].join('\n');
}

/** One line of pg_hba.conf as `pg_hba_file_rules` shows it. */
export interface HbaRule {
  readonly type: string;
  readonly database: readonly string[];
  readonly user_name: readonly string[];
  readonly address: string | null;
  readonly netmask: string | null;
  readonly auth_method: string;
}

/** The method of the first rule a TCP connection from 127.0.0.1 as `role` to `database` meets, as Postgres picks it. */
export function methodFor(rules: readonly HbaRule[], role: string, database: string): string | undefined {
  const ipv4 = (s: string) => s.split('.').reduce((n, b) => n * 256 + Number(b), 0);
  const loopback = ipv4('127.0.0.1');
  const covers = (r: HbaRule): boolean => {
    const a = r.address;
    if (a === null) return false;
    if (a === 'all' || a === 'samehost' || a === 'localhost') return true;
    if (!/^\d+\.\d+\.\d+\.\d+$/.test(a)) return false;
    const mask = r.netmask && /^\d+\.\d+\.\d+\.\d+$/.test(r.netmask) ? ipv4(r.netmask) : 0xffffffff;
    return (ipv4(a) & mask) >>> 0 === (loopback & mask) >>> 0;
  };
  const names = (list: readonly string[], name: string) => list.includes('all') || list.includes(name);
  return rules.find((r) => r.type.startsWith('host') && r.type !== 'hostssl' && covers(r) && names(r.user_name, role) && (names(r.database, database) || r.database.includes('sameuser')))?.auth_method;
}

/**
 * What a server the stack does not own decides for Trawl's TCP connections from 127.0.0.1, in
 * words, from its pg_hba.conf as the server reads it (pg_hba_file_rules needs a superuser).
 */
export async function serverAuthNote(adminUrl: string, role: string, database: string): Promise<string> {
  let rules: HbaRule[];
  try {
    const { rows } = await query(withDatabase(adminUrl, 'postgres'), 'SELECT type, database, user_name, address, netmask, auth_method FROM pg_hba_file_rules WHERE error IS NULL ORDER BY line_number');
    rules = rows as HbaRule[];
  } catch {
    return 'its pg_hba.conf could not be read';
  }
  const method = methodFor(rules, role, database);
  if (method === undefined) return 'its pg_hba.conf has no line for 127.0.0.1';
  if (method === 'trust') return `its pg_hba.conf trusts 127.0.0.1: anyone on this machine connects as any role without a password, ${role} included`;
  return `its pg_hba.conf asks 127.0.0.1 for ${method}`;
}
