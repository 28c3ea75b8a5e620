/**
 * What an e2e test needs of the public API: JSON calls with a key, and a wait for a condition that
 * fails at once, saying why, when a service of the pipeline has died.
 */
import type { Pipeline } from './pipeline.ts';

export interface ApiAnswer {
  readonly status: number;
  readonly body: Record<string, unknown>;
}

export type Api = (method: string, path: string, body?: unknown) => Promise<ApiAnswer>;

/** Calls of the API at `base` with `key` (`Authorization: Bearer`), JSON in and out. */
export function apiClient(base: string, key: string): Api {
  return async (method, path, body) => {
    const res = await fetch(`${base}${path}`, {
      method,
      headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
      ...(body ? { body: JSON.stringify(body) } : {}),
      signal: AbortSignal.timeout(30_000),
    });
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };
}

/** Polls `probe` until `done` accepts its value; checks the pipeline's children on each turn. */
export async function until<T>(probe: () => Promise<T>, done: (v: T) => boolean, timeoutMs: number, what: string, pipeline: Pipeline, everyMs = 200): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await probe();
    if (done(v)) return v;
    pipeline.checkChildren();
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what} (last: ${JSON.stringify(v)})`);
    await new Promise((r) => setTimeout(r, everyMs));
  }
}
