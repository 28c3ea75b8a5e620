/**
 * What a service's operator port says (`/healthz`, `/readyz`, the lag series of `/metrics`), for
 * `trawl status`. Each probe has a short deadline: a service that does not answer is down, however
 * its pid file reads.
 */
import { operatorPortFromEnv } from '@trawl/streams';
import type { ServiceSpec } from './catalogue.ts';

export type Health = 'ok' | 'unready' | 'loop-blocked' | 'down' | 'off';

export interface ServiceHealth {
  /** ok: alive and ready; unready: alive, a readiness check fails (or it is starting); down: no answer. */
  readonly health: Health;
  /** The failing readiness checks, by name (their redacted errors). */
  readonly unready: Readonly<Record<string, string>>;
  /** Sum of the consumer and projection lag series; null without an answer or without consumers. */
  readonly lag: number | null;
  readonly metrics_url: string | null;
}

export function operatorUrlOf(spec: ServiceSpec, env: NodeJS.ProcessEnv = process.env): string | null {
  const port = operatorPortFromEnv(spec.app, { ...env, ...spec.env });
  if (port === undefined) return null;
  const host = env.TRAWL_METRICS_HOST && env.TRAWL_METRICS_HOST !== '0.0.0.0' ? env.TRAWL_METRICS_HOST : '127.0.0.1';
  return `http://${host}:${port}`;
}

/** The lag series summed, from Prometheus text. */
export function lagOf(metrics: string): number | null {
  let sum = 0;
  let seen = false;
  for (const line of metrics.split('\n')) {
    const m = /^trawl_(?:consumer|projection)_lag(?:\{[^}]*\})? (\S+)$/.exec(line);
    if (!m) continue;
    seen = true;
    sum += Number(m[1]);
  }
  return seen ? sum : null;
}

export async function serviceHealth(spec: ServiceSpec, timeoutMs = 1_500): Promise<ServiceHealth> {
  const url = operatorUrlOf(spec);
  if (url === null) return { health: 'off', unready: {}, lag: null, metrics_url: null };
  const get = (path: string) => fetch(`${url}${path}`, { signal: AbortSignal.timeout(timeoutMs) });
  try {
    const live = await get('/healthz');
    const liveBody = (await live.json()) as { status?: string };
    const ready = await get('/readyz');
    const readyBody = (await ready.json()) as { checks?: Record<string, { ok: boolean; error?: string }> };
    const unready = Object.fromEntries(Object.entries(readyBody.checks ?? {}).filter(([, c]) => !c.ok).map(([name, c]) => [name, c.error ?? 'failed']));
    const lag = lagOf(await (await get('/metrics')).text());
    const health: Health = !live.ok ? (liveBody.status === 'loop-blocked' ? 'loop-blocked' : 'down') : ready.ok ? 'ok' : 'unready';
    return { health, unready, lag, metrics_url: `${url}/metrics` };
  } catch {
    return { health: 'down', unready: {}, lag: null, metrics_url: `${url}/metrics` };
  }
}
