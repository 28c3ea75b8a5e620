/**
 * Readiness checks for `/readyz`: can this instance do its job right now? Each check gets a short
 * deadline and the checks run in parallel, so one hung dependency costs one timeout, not a sum.
 * Their errors are redacted of credentials here, once, for every place that shows them.
 */
import { httpTarget, redactText, type createKafka, type Endpoints } from '@trawl/streams';
import type { Pool } from '@trawl/store';

export type ReadinessCheck = (signal: AbortSignal) => Promise<void>;
export type ReadinessChecks = Readonly<Record<string, ReadinessCheck>>;

export interface CheckResult {
  readonly ok: boolean;
  readonly ms: number;
  readonly error?: string;
}

export async function runChecks(checks: ReadinessChecks, timeoutMs = 2_000): Promise<Record<string, CheckResult>> {
  const entries = await Promise.all(
    Object.entries(checks).map(async ([name, check]) => {
      const started = performance.now();
      const controller = new AbortController();
      let timer: NodeJS.Timeout | undefined;
      const deadline = new Promise<never>((_, reject) => {
        timer = setTimeout(() => {
          controller.abort();
          reject(new Error(`no answer within ${timeoutMs} ms`));
        }, timeoutMs);
      });
      try {
        await Promise.race([check(controller.signal), deadline]);
        return [name, { ok: true, ms: Math.round(performance.now() - started) }] as const;
      } catch (err) {
        // Endpoints may carry credentials, and error messages quote endpoints.
        const error = redactText(err instanceof Error ? err.message : String(err));
        return [name, { ok: false, ms: Math.round(performance.now() - started), error }] as const;
      } finally {
        clearTimeout(timer);
      }
    }),
  );
  return Object.fromEntries(entries);
}

/** fetch refuses URLs with credentials: they travel as a Basic header, and no message names them. */
async function httpOk(endpoint: string, signal: AbortSignal): Promise<void> {
  const { url, authorization } = httpTarget(endpoint);
  const res = await fetch(url, { signal, headers: authorization ? { authorization } : {} });
  await res.arrayBuffer();
  if (!res.ok) throw new Error(`${url} answered ${res.status}`);
}

type Kafka = ReturnType<typeof createKafka>;

/** Postgres, Kafka, the schema registry and ClickHouse, as the API sees them. */
export function defaultReadinessChecks(pool: Pool, kafka: Kafka, ep: Endpoints): ReadinessChecks {
  let admin: ReturnType<Kafka['admin']> | undefined;
  return {
    postgres: async () => {
      await pool.query('SELECT 1');
    },
    kafka: async () => {
      try {
        if (!admin) {
          admin = kafka.admin();
          await admin.connect();
        }
        const cluster = await admin.describeCluster();
        if (cluster.brokers.length === 0) throw new Error('no broker in the cluster metadata');
      } catch (err) {
        const stale = admin;
        admin = undefined;
        await stale?.disconnect().catch(() => undefined);
        throw err;
      }
    },
    registry: (signal) => httpOk(`${ep.schemaRegistryUrl}/subjects`, signal),
    clickhouse: (signal) => httpOk(`${ep.clickhouseUrl}/ping`, signal),
  };
}
