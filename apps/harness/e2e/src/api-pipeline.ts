/**
 * The pipeline an API test stands up: projector-pg (and projector-ch when asked), the API on a
 * free port, the frontier and a worker (or several), each a real process; it returns once the worker's group
 * has settled and the API answers `/healthz`, with a key minted for each user and known to the API.
 */
import { createServer, type AddressInfo } from 'node:net';
import { apiClient, until as untilOn, type Api } from './api-client.ts';
import { Pipeline, type Child, type PipelineOptions } from './pipeline.ts';

/** `until` of api-client.ts on one pipeline: polls `probe` until `done` accepts its value. */
export type Until = <T>(probe: () => Promise<T>, done: (v: T) => boolean, timeoutMs: number, what: string) => Promise<T>;

export interface ApiPipelineOptions extends PipelineOptions {
  /** The users to mint a key for (`trawl keys create`), in order: `key` is the first one's. */
  readonly users: readonly string[];
  /** Runs projector-ch too, for the ClickHouse read models. */
  readonly projectorCh?: boolean;
  /** Worker processes; default 1. */
  readonly workers?: number;
  /** How often `until` asks again (ms); default 200. */
  readonly pollMs?: number;
}

export interface ApiPipeline {
  readonly pipeline: Pipeline;
  /** The API's `http://127.0.0.1:<port>`. */
  readonly base: string;
  readonly frontier: Child;
  /** The first worker. */
  readonly worker: Child;
  /** A key for each of `users`, in their order. */
  readonly keys: readonly string[];
  /** The first user's key. */
  readonly key: string;
  /** JSON calls of the API with `key`. */
  readonly api: Api;
  readonly until: Until;
}

/** A TCP port free on the loopback now (a child told to listen on it binds it a moment later). */
export async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(0, '127.0.0.1', resolve);
  });
  const { port } = server.address() as AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/**
 * Starts the pipeline and its services. A start that fails stops what it had started (the test
 * never sees the pipeline to stop it) and throws.
 */
export async function startApiPipeline(options: ApiPipelineOptions): Promise<ApiPipeline> {
  const { users, projectorCh = false, workers = 1, pollMs = 200, ...pipelineOptions } = options;
  const pipeline = await Pipeline.start(pipelineOptions);
  try {
    const until: Until = (probe, done, timeoutMs, what) => untilOn(probe, done, timeoutMs, what, pipeline, pollMs);
    const port = await freePort();
    const base = `http://127.0.0.1:${port}`;
    pipeline.spawn('projector-pg');
    if (projectorCh) pipeline.spawn('projector-ch');
    pipeline.spawn('api', { TRAWL_API_HOST: '127.0.0.1', TRAWL_API_PORT: String(port) });
    const frontier = pipeline.spawn('frontier');
    const worker = pipeline.spawn('worker');
    for (let i = 1; i < workers; i++) pipeline.spawn('worker');
    await pipeline.groupSettled('trawl-worker', workers);
    await until(() => fetch(`${base}/healthz`, { signal: AbortSignal.timeout(2_000) }).then((r) => r.ok).catch(() => false), (ok) => ok, 120_000, 'the API');
    const keys = await Promise.all(users.map((user) => pipeline.createKey(user)));
    // A new key reaches the API's in-memory index by a notification: usable a moment later.
    for (const k of keys) await until(() => apiClient(base, k)('GET', '/jobs?limit=1'), (r) => r.status !== 401, 30_000, 'the new key known to the API');
    const key = keys[0] ?? '';
    return { pipeline, base, frontier, worker, keys, key, api: apiClient(base, key), until };
  } catch (err) {
    await pipeline.stop().catch(() => undefined);
    throw err;
  }
}
