/**
 * Where the registry keeps its schemas: in the log, beside the events they decode.
 *
 * Apicurio's KafkaSQL storage writes every change to a journal topic and rebuilds its state from it
 * at start (with a snapshot topic to start from). The schema ids that every event record names then
 * live in the same replicated, durable place as the records: a Postgres lost or restarted cannot
 * leave the log undecodable, and Apicurio's SQL storage, which does not recover after its Postgres
 * restarts, is not on the path at all.
 *
 * The stack creates both topics itself before the registry starts, with one partition (the journal
 * is one ordered history), the cluster's replication, and kept forever: Apicurio 3.0.9 would create
 * them with the broker's default retention (7 days), after which its schemas would be deleted.
 * A topic it made earlier is set to keep forever.
 *
 * A stack whose registry kept its schemas in Postgres (before this) moves them once: the old
 * registry's export (Apicurio's admin export, a zip of every group, artifact, version and rule with
 * their ids) imported into the new one, then every schema id compared through the Confluent API;
 * `registry/storage` in the stack's home, and a table in the old database, record that the move is
 * done.
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createKafka, createTopicsAndWait, endpoints, replicationConfigs, replicationFor, type Logger } from '@trawl/streams';
import type { StackContext } from './context.ts';
import { errorMessage, PartStartError } from './errors.ts';
import { query } from './pg-client.ts';

const PART = 'registry';

export interface RegistryTopics {
  readonly journal: string;
  readonly snapshots: string;
  /** Apicurio's change notifications: no state, made by Apicurio itself. */
  readonly events: string;
}

/** `TRAWL_REGISTRY_TOPIC` (default `_trawl-registry`) + `-journal` / `-snapshots` / `-events`: a second stack on the same Kafka names its own. */
export function registryTopics(env: NodeJS.ProcessEnv): RegistryTopics {
  const base = env.TRAWL_REGISTRY_TOPIC?.trim() || '_trawl-registry';
  if (!/^[A-Za-z0-9._-]{1,200}$/.test(base)) throw new PartStartError(PART, `TRAWL_REGISTRY_TOPIC ${JSON.stringify(base)} is not a Kafka topic name`, 'use letters, digits, ".", "_" and "-"');
  return { journal: `${base}-journal`, snapshots: `${base}-snapshots`, events: `${base}-events` };
}

const FOREVER = { 'cleanup.policy': 'delete', 'retention.ms': '-1', 'retention.bytes': '-1' } as const;

/** Creates the registry's topics, or sets existing ones to keep forever. */
export async function ensureRegistryTopics(ctx: StackContext, brokers: readonly string[], topics: RegistryTopics, logger: Logger): Promise<'created' | 'present'> {
  const admin = createKafka({ clientId: 'trawl-stack', logger, endpoints: { ...endpoints(ctx.env), kafkaBrokers: brokers } }).admin();
  await admin.connect();
  try {
    const size = (await admin.describeCluster()).brokers.length;
    const { factor } = replicationFor(size);
    const existing = new Set(await admin.listTopics());
    const missing = [topics.journal, topics.snapshots].filter((t) => !existing.has(t));
    if (missing.length > 0) {
      const configs = { ...FOREVER, ...replicationConfigs(factor) };
      // Waited out as the catalogue's topics are: a broker just started answers "does not host
      // this topic-partition" for a while, which kafkajs's own wait gives up on.
      await createTopicsAndWait(
        admin,
        missing.map((topic) => ({ topic, numPartitions: 1, replicationFactor: factor, configEntries: Object.entries(configs).map(([name, value]) => ({ name, value })) })),
      );
    }
    const present = [topics.journal, topics.snapshots].filter((t) => existing.has(t));
    if (present.length > 0) {
      // AlterConfigs replaces a topic's whole set: what its copies call for goes in with it.
      const { topics: meta } = await admin.fetchTopicMetadata({ topics: present });
      await admin.alterConfigs({
        validateOnly: false,
        resources: meta.map((t) => ({
          type: 2 /* TOPIC */,
          name: t.name,
          configEntries: Object.entries({ ...FOREVER, ...replicationConfigs(t.partitions[0]?.replicas.length ?? 1) }).map(([n, value]) => ({ name: n, value })),
        })),
      });
    }
    return missing.length > 0 ? 'created' : 'present';
  } finally {
    await admin.disconnect().catch(() => undefined);
  }
}

const STORAGE_FILE = 'storage';

/** Whether this stack's registry keeps its schemas in the log already (its move from Postgres done, or never needed). */
export function storedInLog(ctx: StackContext): boolean {
  const file = join(ctx.home, 'registry', STORAGE_FILE);
  return existsSync(file) && readFileSync(file, 'utf8').trim() === 'kafkasql';
}

export function markStoredInLog(ctx: StackContext): void {
  writeFileSync(join(ctx.home, 'registry', STORAGE_FILE), 'kafkasql\n', { mode: 0o600 });
}

/** Where a database holding moved schemas says so (in the registry's old database itself). */
const MOVED_TABLE = 'trawl_moved_to_log';

/**
 * How many schemas the registry's old Postgres database holds that are not in the log yet: 0 when
 * there is no such database or Apicurio never made its tables there, or when a move recorded itself
 * there (so a new TRAWL_HOME on the same Postgres does not move them again). Any other failure
 * (Postgres slow to answer, a login refused) is no answer: the caller stops rather than start a
 * registry that would not know the ids the log names.
 */
export async function schemasInPostgres(registryDatabaseUrl: string): Promise<number> {
  try {
    const { rows } = await query(registryDatabaseUrl, `SELECT to_regclass('${MOVED_TABLE}') IS NOT NULL AS moved, (SELECT count(*) FROM content) AS n`);
    return rows[0].moved ? 0 : Number(rows[0].n);
  } catch (err) {
    const code = (err as { code?: string }).code;
    if (code === '3D000' /* no such database */ || code === '42P01' /* no such table */) return 0;
    throw new PartStartError(PART, `cannot tell whether the registry's old database holds schemas: ${errorMessage(err)}`, 'fix the Postgres line above (or its DATABASE_URL) and run `up` again');
  }
}

/** Records in the old database that its schemas are in the log now. */
export async function markMovedInPostgres(registryDatabaseUrl: string, journal: string): Promise<void> {
  await query(registryDatabaseUrl, `CREATE TABLE IF NOT EXISTS ${MOVED_TABLE} (journal text NOT NULL, moved_at timestamptz NOT NULL DEFAULT now())`);
  await query(registryDatabaseUrl, `INSERT INTO ${MOVED_TABLE} (journal) VALUES ($1)`, [journal]);
}

/** A registry's root (`http://127.0.0.1:<port>`) and its Basic credentials. */
export interface RegistryEndpoint {
  readonly root: string;
  readonly authorization: string;
}

export function basicAuth(user: string, password: string): string {
  return `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;
}

async function call(to: RegistryEndpoint, path: string, init: RequestInit = {}): Promise<Response> {
  return fetch(`${to.root}${path}`, { ...init, headers: { authorization: to.authorization, ...(init.headers as Record<string, string> | undefined) }, signal: AbortSignal.timeout(120_000) });
}

async function json<T>(at: RegistryEndpoint, path: string): Promise<T> {
  const res = await call(at, path);
  if (!res.ok) throw new PartStartError(PART, `GET ${path} answered ${res.status} while moving the registry's schemas`, 'read .trawl/logs/registry-move.log');
  return (await res.json()) as T;
}

/** Every schema id the registry answers through the Confluent API for its subjects' versions, with the schema's text. */
export async function schemasById(at: RegistryEndpoint): Promise<Map<number, string>> {
  const out = new Map<number, string>();
  for (const subject of await json<string[]>(at, '/apis/ccompat/v7/subjects')) {
    const path = `/apis/ccompat/v7/subjects/${encodeURIComponent(subject)}/versions`;
    for (const v of await json<number[]>(at, path)) {
      const version = await json<{ id: number; schema: string }>(at, `${path}/${v}`);
      out.set(version.id, version.schema);
    }
  }
  return out;
}

/** A registry's schemas as its admin export gives them, with the ids they answer to. */
export interface ExportedSchemas {
  readonly zip: Buffer;
  readonly ids: ReadonlyMap<number, string>;
}

/** Apicurio's admin export of `from` (a zip of every group, artifact, version and rule, ids kept), and every id's schema. */
export async function exportSchemas(from: RegistryEndpoint): Promise<ExportedSchemas> {
  const ids = await schemasById(from);
  const exported = await call(from, '/apis/registry/v3/admin/export');
  if (!exported.ok) throw new PartStartError(PART, `exporting the schemas from the registry's old storage answered ${exported.status}`, 'read .trawl/logs/registry.log');
  return { zip: Buffer.from(await exported.arrayBuffer()), ids };
}

/**
 * Imports an export into `to` (the registry on the log) and compares every id. A registry that
 * holds schemas already (a move stopped half-way) gets no second import: its ids are compared.
 */
export async function importSchemas(to: RegistryEndpoint, exported: ExportedSchemas): Promise<number> {
  if ((await schemasById(to)).size === 0) {
    const imported = await call(to, '/apis/registry/v3/admin/import', { method: 'POST', headers: { 'content-type': 'application/zip' }, body: new Uint8Array(exported.zip) });
    if (!imported.ok) throw new PartStartError(PART, `importing the schemas into the registry's log answered ${imported.status}: ${(await imported.text()).slice(0, 300)}`, 'read .trawl/logs/registry.log');
  }
  const after = await schemasById(to);
  const differ = [...exported.ids].filter(([id, schema]) => after.get(id) !== schema).map(([id]) => id);
  if (differ.length > 0) {
    throw new PartStartError(PART, `${differ.length} of ${exported.ids.size} schema ids differ after the move to the log (ids ${differ.slice(0, 10).join(', ')})`, 'the old storage is untouched and nothing is recorded as moved: read .trawl/logs/registry-move.log; the journal topic may hold a half-done import to delete before `up` tries again');
  }
  return exported.ids.size;
}
