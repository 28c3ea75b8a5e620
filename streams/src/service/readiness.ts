/**
 * Readiness checks for `/readyz`: can this process do its job right now? Each check gets a short
 * deadline and the checks run in parallel, so one hung dependency costs one timeout, not a sum.
 * Their errors are redacted of credentials here, once, for every place that shows them.
 */
import type { Admin, Kafka } from 'kafkajs';
import { httpTarget, redactText } from '@trawl/base';

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

/**
 * A check that passes once `joined` resolved (a consumer's or projection's `ready`: its first
 * assignment from the group) and fails until then.
 */
export function joinedCheck(joined: Promise<unknown>): ReadinessCheck {
  let done = false;
  void joined.then(() => (done = true), () => undefined);
  return async () => {
    if (!done) throw new Error('not yet joined its consumer group');
  };
}

/** Postgres answers `SELECT 1`. */
export function postgresCheck(pool: { query(sql: string): Promise<unknown> }): ReadinessCheck {
  return async () => {
    await pool.query('SELECT 1');
  };
}

/** An HTTP endpoint answers 2xx; fetch refuses URLs with credentials, so they travel as a Basic header. */
export function httpCheck(endpoint: string): ReadinessCheck {
  return async (signal) => {
    const { url, authorization } = httpTarget(endpoint);
    const res = await fetch(url, { signal, headers: authorization ? { authorization } : {} });
    await res.arrayBuffer();
    if (!res.ok) throw new Error(`${url} answered ${res.status}`);
  };
}

/** The cluster's metadata names a broker (one admin connection, made again after a failure). */
export function kafkaCheck(kafka: Kafka): ReadinessCheck {
  let admin: Admin | undefined;
  return async () => {
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
  };
}
