/** The site server started as its own process, with its counters a request away. */
import { onInterrupt } from '../measure/on-interrupt.ts';
import { startScript, type ScriptProcess } from '../measure/script-process.ts';
import type { SiteOptions } from './site-model.ts';
import type { SiteStats } from './site-stats.ts';

export interface SiteServerOptions extends SiteOptions {
  readonly latencyMs?: number;
  readonly jitterMs?: number;
  readonly failRate?: number;
  readonly logFile?: string;
}

export interface SiteProcess {
  readonly pid: number;
  readonly port: number;
  readonly home: string;
  /** `host:port` of every host the site is spread over. */
  readonly hosts: readonly string[];
  readonly options: SiteServerOptions;
  stats(): Promise<SiteStats>;
  /** Zeroes the counters and re-arms the injected failures: call before each contender. */
  reset(): Promise<void>;
  close(): Promise<void>;
}

export async function startSite(options: SiteServerOptions): Promise<SiteProcess> {
  const args = [
    '--pages', String(options.pages), '--links', String(options.links), '--items', String(options.items),
    '--hosts', String(options.hosts), '--render', options.render,
    '--latency-ms', String(options.latencyMs ?? 0), '--jitter-ms', String(options.jitterMs ?? 0), '--fail-rate', String(options.failRate ?? 0),
  ];
  const proc: ScriptProcess = startScript('site/site-server.ts', { args, ...(options.logFile ? { logFile: options.logFile } : {}) });
  const ready = await proc.waitFor<{ port: number; home: string; hosts: string[] }>((l) => l.ready === true, 60_000);
  const control = `http://127.0.0.1:${ready.port}/__bench`;
  const forget = onInterrupt(() => proc.stop());
  return {
    pid: proc.pid,
    port: ready.port,
    home: ready.home,
    hosts: ready.hosts,
    options,
    stats: async () => (await (await fetch(`${control}/stats`)).json()) as SiteStats,
    reset: async () => {
      await (await fetch(`${control}/reset`, { method: 'POST' })).text();
    },
    close: async () => {
      forget();
      await proc.stop();
    },
  };
}
