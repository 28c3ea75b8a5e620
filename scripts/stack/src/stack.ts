/**
 * The stack as a whole: which parts start in parallel, which wait for which, and what `up`,
 * `down` and `status` report. Postgres, Kafka, ClickHouse, S3Proxy and Chromium start together; the
 * registry waits for Postgres (its storage), the topics for Kafka.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ENDPOINT_DEFAULTS, stackEnvFile, type Logger } from '@trawl/streams';
import { chromiumStatus, chromiumUp } from './chromium.ts';
import { clickhouseDown, clickhouseStatus, clickhouseUp } from './clickhouse.ts';
import { createContext, userEndpoint, type StackContext } from './context.ts';
import { keepPrivate, loadCredentials, secretsEnv } from './credentials.ts';
import { writeStackEnv } from './env-file.ts';
import { DependencyFailedError, PartStartError, StackError, errorMessage } from './errors.ts';
import { kafkaDown, kafkaStatus, kafkaUp } from './kafka.ts';
import { withStackLock } from './lock.ts';
import { stackLogger } from './logger.ts';
import { PART_NAMES, type PartDown, type PartName, type PartStatus, type PartUp } from './part.ts';
import { postgresDown, postgresStatus, postgresUp } from './postgres.ts';
import { privateDir } from './private-dirs.ts';
import { registryDown, registryStatus, registryUp } from './registry.ts';
import { s3Down, s3Status, s3Up } from './s3.ts';
import { topicsStatus, topicsUp } from './topics.ts';

export type UpStep =
  | { readonly part: PartName; readonly ok: true; readonly ms: number; readonly up: PartUp }
  | { readonly part: PartName; readonly ok: false; readonly ms: number; readonly error: StackError };

export interface StackOptions {
  /** The environment to resolve endpoints and ports from; default process.env. */
  readonly env?: NodeJS.ProcessEnv;
  /** Called as each part finishes, in completion order: progress for humans. */
  readonly onStep?: (step: UpStep) => void;
  /** Called when another stack command holds the lock and this one waits. */
  readonly onWait?: (holderPid: number) => void;
  /** kafkajs's logger; default silent (see logger.ts). */
  readonly logger?: Logger;
  /**
   * `up --brokers N`: Kafka nodes to run (TRAWL_KAFKA_NODES otherwise); by default as many as
   * TRAWL_HOME/kafka was formatted for, one for a new one.
   */
  readonly brokers?: number;
}

export interface StackUpReport {
  readonly ok: boolean;
  readonly ms: number;
  readonly steps: readonly UpStep[];
  /** TRAWL_HOME/stack.env, and whether this `up` changed it. */
  readonly envFile: string;
  readonly envChanged: boolean;
}

function asStackError(part: PartName, err: unknown): StackError {
  if (err instanceof StackError) return err;
  return new PartStartError(part, errorMessage(err), 'this is unexpected: run with TRAWL_LOG_LEVEL=debug for details and read .trawl/logs/', { cause: err });
}

function prepare(ctx: StackContext): void {
  mkdirSync(ctx.home, { recursive: true });
  for (const dir of [ctx.runDir, ctx.logDir]) privateDir(dir);
}

/**
 * The parts' directories of an older stack (0755) brought to 0700 before anything starts or is
 * reused (private-dirs.ts); a part's own start makes its directory so when it is new. The private
 * Postgres cluster's belongs to its own user as root: postgres.ts sees to it.
 */
const PART_DIRS = ['kafka', 'clickhouse', 's3', 'registry'] as const;
function keepPartsPrivate(ctx: StackContext): void {
  for (const dir of PART_DIRS.map((d) => join(ctx.home, d))) if (existsSync(dir)) privateDir(dir);
}

/**
 * Brings every part up, reusing what already runs. Never throws for a part's failure: the report
 * says which part failed, why and what to do (`ok` is false), and the other parts still start.
 */
export async function stackUp(opts: StackOptions = {}): Promise<StackUpReport> {
  const ctx = createContext(opts.env, opts.brokers !== undefined ? { kafkaNodes: opts.brokers } : {});
  const logger = opts.logger ?? stackLogger(ctx.env);
  prepare(ctx);
  return withStackLock(
    ctx.runDir,
    async () => {
      const t0 = performance.now();
      const steps: UpStep[] = [];
      const step = async (part: PartName, fn: () => Promise<PartUp>): Promise<PartUp | undefined> => {
        const start = performance.now();
        let s: UpStep;
        try {
          const up = await fn();
          s = { part, ok: true, ms: performance.now() - start, up };
        } catch (err) {
          s = { part, ok: false, ms: performance.now() - start, error: asStackError(part, err) };
        }
        steps.push(s);
        opts.onStep?.(s);
        return s.ok ? s.up : undefined;
      };
      const dependent = (part: PartName, on: PartName) => (): Promise<PartUp> =>
        Promise.reject(new DependencyFailedError(part, `skipped: ${on} is not up`, `fix ${on} first (see its line above)`));

      // Generated on the first `up` and kept (credentials.ts); parts the stack runs require them.
      const creds = loadCredentials(ctx.home, ctx.env);
      keepPrivate(stackEnvFile(ctx.env));
      keepPartsPrivate(ctx);
      const postgres = step('postgres', () => postgresUp(ctx, creds));
      const kafka = step('kafka', () => kafkaUp(ctx, logger));
      const others = [step('clickhouse', () => clickhouseUp(ctx, creds)), step('s3', () => s3Up(ctx, creds)), step('chromium', () => chromiumUp(ctx))];
      // The registry keeps its schemas in Kafka; Postgres only for a stack whose schemas are still there to move.
      const registry = Promise.all([postgres, kafka]).then(([pg, k]) =>
        step(
          'registry',
          k ? () => registryUp(ctx, k.endpoint.split(','), pg ? (userEndpoint(ctx, 'DATABASE_URL') ?? pg.env?.DATABASE_URL ?? ENDPOINT_DEFAULTS.DATABASE_URL) : undefined, creds, logger) : dependent('registry', 'kafka'),
        ),
      );
      const topics = kafka.then((k) => step('topics', k ? () => topicsUp(ctx, k.endpoint.split(','), logger) : dependent('topics', 'kafka')));
      await Promise.all([postgres, kafka, registry, topics, ...others]);

      // The key of secrets at rest goes to services the way endpoints' credentials do.
      const updates: Record<string, string | undefined> = { ...secretsEnv(ctx.home, creds, ctx.env) };
      for (const s of steps) if (s.ok) Object.assign(updates, s.up.env ?? {});
      const envFile = stackEnvFile(ctx.env);
      const envChanged = writeStackEnv(envFile, updates);
      const order = (p: PartName): number => PART_NAMES.indexOf(p);
      return {
        ok: steps.every((s) => s.ok),
        ms: performance.now() - t0,
        steps: [...steps].sort((a, b) => order(a.part) - order(b.part)),
        envFile,
        envChanged,
      };
    },
    opts.onWait ? { onWait: opts.onWait } : {},
  );
}

export type DownStep = { readonly ms: number } & PartDown;

/** Stops what `up` started (pid files), the registry before the Postgres it stores in. */
export async function stackDown(opts: Omit<StackOptions, 'onStep' | 'logger'> & { onStep?: (step: DownStep) => void } = {}): Promise<DownStep[]> {
  const ctx = createContext(opts.env);
  prepare(ctx);
  return withStackLock(
    ctx.runDir,
    async () => {
      const steps: DownStep[] = [];
      const step = async (fn: () => Promise<PartDown>): Promise<void> => {
        const start = performance.now();
        const s = { ...(await fn()), ms: performance.now() - start };
        steps.push(s);
        opts.onStep?.(s);
      };
      await Promise.all([step(() => registryDown(ctx)), step(() => kafkaDown(ctx)), step(() => clickhouseDown(ctx)), step(() => s3Down(ctx))]);
      await step(() => postgresDown(ctx));
      return steps;
    },
    opts.onWait ? { onWait: opts.onWait } : {},
  );
}

export interface StackStatusReport {
  /** True when every part is up. */
  readonly ok: boolean;
  readonly parts: readonly PartStatus[];
}

export async function stackStatus(opts: Pick<StackOptions, 'env' | 'logger'> = {}): Promise<StackStatusReport> {
  const ctx = createContext(opts.env);
  const logger = opts.logger ?? stackLogger(ctx.env);
  const kafka = kafkaStatus(ctx, logger);
  const topics = kafka.then((k): Promise<PartStatus> | PartStatus =>
    k.state === 'up'
      ? topicsStatus(ctx, k.endpoint.split(','), logger)
      : { part: 'topics', state: 'down', ours: false, endpoint: k.endpoint, note: 'kafka is not up' },
  );
  const parts = await Promise.all([postgresStatus(ctx), kafka, registryStatus(ctx), clickhouseStatus(ctx), s3Status(ctx), chromiumStatus(ctx), topics]);
  return { ok: parts.every((p) => p.state === 'up'), parts };
}
