/**
 * Trawl's services as `trawl up` starts them, in start order: consumers of the read models first,
 * then the crawl pipeline, then the API and the demo site. `trawl down` stops them in reverse.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { appDir } from '@trawl/streams';

export interface ServiceSpec {
  /** Unique instance name: log file, pid file. */
  readonly name: string;
  /** The app under apps/<role>/. */
  readonly app: string;
  /** Extra environment for this instance. */
  readonly env: Readonly<Record<string, string>>;
}

export const SERVICE_APPS = ['projector-pg', 'projector-ch', 'webhooks', 'dispatcher', 'frontier', 'worker', 'api', 'demo-site'] as const;

export function workerCount(env: NodeJS.ProcessEnv = process.env): number {
  const n = Number(env.TRAWL_WORKERS ?? 2);
  return Number.isInteger(n) && n >= 1 && n <= 64 ? n : 2;
}

export function serviceCatalogue(env: NodeJS.ProcessEnv = process.env): ServiceSpec[] {
  return SERVICE_APPS.flatMap((app): ServiceSpec[] =>
    app === 'worker'
      ? Array.from({ length: workerCount(env) }, (_, i) => ({ name: `worker-${i + 1}`, app, env: { TRAWL_WORKER_INSTANCE: String(i + 1) } }))
      : [{ name: app, app, env: {} }],
  );
}

export function mainOf(app: string): string {
  return join(appDir(app), 'src', 'main.ts');
}

export function isInstalled(app: string): boolean {
  return existsSync(mainOf(app));
}
